package testkit

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
)

func TestEventuallyReturnsOnceTheConditionHolds(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	Eventually(t, "the third check", func() bool { return n.Add(1) == 3 })
	if got := n.Load(); got != 3 {
		t.Errorf("condition checked %d times, want 3", got)
	}
}

// recorder is a testing.TB that records how a helper stopped the test instead of stopping it.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper()                        {}
func (r *recorder) Fatalf(format string, a ...any) { r.fatal = fmt.Sprintf(format, a...) }
func (r *recorder) Skip(a ...any)                  { r.skip = fmt.Sprint(a...) }

// A missing tool skips a test on a developer's machine and fails it on CI.
func TestMissingSkipsOffCIAndFailsOnCI(t *testing.T) {
	for _, tt := range []struct {
		ci          string
		fatal, skip string
	}{
		{"", "", "chromium is not installed at /usr/bin/chromium"},
		{"false", "", "chromium is not installed at /usr/bin/chromium"},
		{"true", "chromium is not installed at /usr/bin/chromium; CI=true, so this test must run here, not skip", ""},
	} {
		t.Setenv("CI", tt.ci)
		r := &recorder{TB: t}
		Missing(r, "chromium is not installed at %s", "/usr/bin/chromium")
		if r.fatal != tt.fatal || r.skip != tt.skip {
			t.Errorf("CI=%q: Fatalf %q, Skip %q; want %q, %q", tt.ci, r.fatal, r.skip, tt.fatal, tt.skip)
		}
	}
}

// skipsForNoMissingTool are the skips that stand for no missing tool, so they skip on CI too, by
// file and how many: opt-in suites, -short, and a case its table does not apply to. Every other
// skip is testkit.Missing, so that CI never prints ok for a suite that did not run.
var skipsForNoMissingTool = map[string]int{
	"agent/record_test.go":             1, // re-recording the CLI transcripts is opt-in (-record)
	"test/soak_test.go":                1, // the soak test is opt-in (SOAK=1)
	"test/outbox_soak_test.go":         1, // the crash soak is opt-in (SOAK_CRASH=1)
	"test/recovery_test.go":            2, // engines a recovery scenario does not apply to
	"test/chat_suite_test.go":          1, // a chat scenario on a platform that has no such gesture
	"cmd/bench/bench_test.go":          2, // -short (the cli and scale scenarios build the bot binary)
	"db/sqlite/errors_test.go":         1, // -short
	"adapters/discord/gateway_test.go": 1, // a limitation of the pinned discordgo, with how to lift it
}

var skipCall = regexp.MustCompile(`\.Skip(f|Now)?\(`)

func TestEverySkipForAMissingToolGoesThroughMissing(t *testing.T) {
	root := ".." // the module's root: this package is one folder down
	found := map[string]int{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "testkit"):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go"):
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n := len(skipCall.FindAll(src, -1)); n > 0 {
			rel, _ := filepath.Rel(root, path) // path is under root
			found[filepath.ToSlash(rel)] = n
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for file, n := range found {
		if n != skipsForNoMissingTool[file] {
			t.Errorf("%s calls Skip %d times (%d listed here): a test that needs a missing tool calls testkit.Missing, "+
				"which fails on CI; list other skips in skipsForNoMissingTool with the reason", file, n, skipsForNoMissingTool[file])
		}
	}
	for file, n := range skipsForNoMissingTool {
		if found[file] != n {
			t.Errorf("%s is listed with %d skips but calls Skip %d times; update skipsForNoMissingTool", file, n, found[file])
		}
	}
}
