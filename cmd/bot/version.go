package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

// version prints what this binary was built from, read from the build information Go embeds:
// the module version ("(devel)" for a build from a checkout), the VCS revision and whether the
// tree had uncommitted changes, and the Go version.
func version(_ context.Context, inv invocation, args []string) error {
	if len(args) == 1 && isHelpFlag(args[0]) {
		fmt.Fprintln(inv.stdout, "usage: bot version  (prints the module version, VCS revision and Go version of this binary)")
		return nil
	}
	if len(args) > 0 {
		return &usageError{"bot version takes no arguments"}
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return fmt.Errorf("this binary carries no build information; build it with go build ./cmd/bot")
	}
	fmt.Fprintf(inv.stdout, "threadflow %s\n", versionLine(info))
	return nil
}

func versionLine(info *debug.BuildInfo) string {
	rev, modified := "unknown (built without VCS stamping: outside a git checkout, or with -buildvcs=false)", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified {
		rev += " (modified)"
	}
	return fmt.Sprintf("%s revision %s %s", info.Main.Version, rev, info.GoVersion)
}
