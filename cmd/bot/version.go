package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
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
	exe, err := os.Executable()
	if err != nil {
		exe = "" // then it is not known to be a go run binary, and the revision is not looked for
	}
	fmt.Fprintf(inv.stdout, "threadflow %s\n", versionLine(info, exe, sourceDir()))
	return nil
}

// versionLine is the version, the revision and the Go version of a binary with build information
// info, running as exe, compiled from the package directory src ("" when unknown).
func versionLine(info *debug.BuildInfo, exe, src string) string {
	rev, modified, stamped := "", false, false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev, stamped = s.Value, true
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if !stamped {
		return fmt.Sprintf("%s revision %s %s", info.Main.Version, unstampedRevision(exe, src), info.GoVersion)
	}
	if modified {
		rev += " (modified)"
	}
	return fmt.Sprintf("%s revision %s %s", info.Main.Version, rev, info.GoVersion)
}

// unstampedRevision is the revision of a binary Go did not stamp, or why it is unknown. `go run`
// never stamps the binaries it builds, but it builds them from the checkout that is there now, so
// git can read that checkout's revision as `go build` would have stamped it. A binary that was
// built, then, was built outside a git checkout or with VCS stamping turned off, and no checkout
// found now tells what it was built from.
func unstampedRevision(exe, src string) string {
	const howto = "go build -o bot ./cmd/bot && ./bot version stamps and shows it"
	if !builtByGoRun(exe) {
		return "unknown (this binary carries no VCS stamp: go run stamps none, and go build none outside a git checkout " +
			"or with -buildvcs=false, perhaps from GOFLAGS (go env GOFLAGS shows it))"
	}
	if !filepath.IsAbs(src) {
		return "unknown (go run stamps no VCS revision, and this binary was built with -trimpath, so its checkout is not known; " + howto + ")"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "-C", src, "rev-parse", "HEAD").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("unknown (go run stamps no VCS revision, and git could not read the checkout %s: %s; %s)",
			src, cmp.Or(strings.TrimSpace(string(out)), err.Error()), howto)
	}
	rev := strings.TrimSpace(string(out))
	// The same test as Go's stamping: anything git status reports, untracked files included.
	switch status, err := exec.CommandContext(ctx, "git", "-C", src, "status", "--porcelain").Output(); {
	case err != nil:
		rev += " (whether it has changes is unknown: git status: " + err.Error() + ")"
	case len(status) > 0:
		rev += " (modified)"
	}
	return rev + " (read from the checkout by git: go run stamps no revision)"
}

// builtByGoRun recognises a binary `go run` built by where it runs from: the build's temporary
// work directory, $TMPDIR/go-buildNNN/bNNN/exe/NAME (go run -work prints it), or, since Go 1.24
// caches the executables go run builds, the build cache, $GOCACHE/XX/HASH-d/NAME.
func builtByGoRun(exe string) bool {
	dir := filepath.Dir(exe)
	if filepath.Base(dir) == "exe" && strings.HasPrefix(filepath.Base(filepath.Dir(filepath.Dir(dir))), "go-build") {
		return true
	}
	return cachedOutput.MatchString(filepath.Base(dir)) && len(filepath.Base(filepath.Dir(dir))) == 2
}

// cachedOutput is the name of an output directory in the Go build cache: a SHA-256 in hex, "-d".
var cachedOutput = regexp.MustCompile(`^[0-9a-f]{64}-d$`)

// sourceDir is the directory this package was compiled from, as the compiler recorded it:
// absolute, unless the build used -trimpath.
func sourceDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	return filepath.Dir(file)
}
