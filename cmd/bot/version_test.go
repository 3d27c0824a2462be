package main

import (
	"os/exec"
	"strings"
	"testing"

	"threadflow/testkit"
)

// `go run ./cmd/bot version` in a git checkout shows the checkout's revision: go run stamps none
// into the binary, so the binary reads it with git from the directory it was built from.
func TestVersionUnderGoRunShowsTheCheckoutsRevision(t *testing.T) {
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		testkit.Missing(t, "git or a git checkout: %v", err)
	}
	status, err := exec.Command("git", "status", "--porcelain").Output()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "run", ".", "version").CombinedOutput()
	if err != nil {
		t.Fatalf("go run . version: %v\n%s", err, out)
	}
	want := "revision " + strings.TrimSpace(string(head))
	if len(status) > 0 {
		want += " (modified)"
	}
	if want += " (read from the checkout by git: go run stamps no revision) go1."; !strings.Contains(string(out), want) {
		t.Errorf("go run . version = %q, want %q", out, want)
	}
}

// A binary without VCS information says why it has none: go run's (in its work directory or, since
// Go 1.24, the build cache) when git cannot read its checkout, any other by what leaves it out.
func TestVersionOfAnUnstampedBinarySaysWhy(t *testing.T) {
	for exe, want := range map[string]string{
		"/tmp/go-build123/b001/exe/bot": "go run stamps no VCS revision, and this binary was built with -trimpath",
		"/root/.cache/go-build/6c/6c137bd332a47a28ade771cfdf694fa1343284a73d5cf291fca6b4aef9a45cb7-d/bot": "go run stamps no VCS revision, and this binary was built with -trimpath",
		"/usr/local/bin/bot": "unknown (this binary carries no VCS stamp: go run stamps none, and go build none outside a git checkout or with -buildvcs=false, perhaps from GOFLAGS",
	} {
		if got := unstampedRevision(exe, "threadflow/cmd/bot"); !strings.Contains(got, want) {
			t.Errorf("unstampedRevision(%s) = %q, want %q", exe, got, want)
		}
	}
	if got := unstampedRevision("/tmp/go-build123/b001/exe/bot", t.TempDir()); !strings.Contains(got, "git could not read the checkout") {
		t.Errorf("outside a checkout: %q", got)
	}
}
