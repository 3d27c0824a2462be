package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// smallDisk mounts a tmpfs of size (such as "32m") for the test, or skips when it cannot: mounting
// needs root.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs as THREADFLOW_HOME needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// A node that fills the disk holding THREADFLOW_HOME (and the SQLite database) leaves its run
// paused and resumable, says why in the conversation, and the bot then stops claiming runs and
// reports itself not ready, naming the disk.
func TestNodeFillingTheDiskLeavesTheRunResumable(t *testing.T) {
	home := smallDisk(t, "32m")
	wf := t.TempDir()
	writeFile(t, filepath.Join(wf, "fill.yaml"), `name: fill
nodes:
  - id: fill
    bash: yes 'fill the disk' | head -c 100000000
  - id: after
    depends_on: [fill]
    bash: echo after
`)
	env := map[string]string{"THREADFLOW_HOME": home, "WORKFLOWS_DIR": wf, "MIN_FREE_DISK": "8MB", "LOG_LEVEL": "info",
		"LOG_FORMAT": "json", "HTTP_ADDR": "127.0.0.1:0"}

	out, code := cli(t, env, "workflow", "run", "fill")
	m := runIDPattern.FindStringSubmatch(out)
	if code != exitPaused || m == nil {
		t.Fatalf("workflow run fill = exit %d, want %d (paused, resumable):\n%s", code, exitPaused, out)
	}
	for _, want := range []string{"could not continue and is paused", "No space left on device", "the disk is full",
		"/workflow resume " + m[1]} {
		if !strings.Contains(out, want) {
			t.Errorf("the run's notice lacks %q:\n%s", want, out)
		}
	}
	if out, _ := cli(t, env, "workflow", "status", m[1]); !strings.Contains(out, "paused") {
		t.Errorf("workflow status after the disk filled:\n%s", out)
	}

	b := runBot(t, env)
	base := waitURL(t, b.stdout, b.done, b.stderr)
	code, body := get(t, base+"readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "less than MIN_FREE_DISK") || !strings.Contains(body, home) {
		t.Fatalf("GET /readyz = %d %q; want 503 naming the disk and MIN_FREE_DISK", code, body)
	}
	t.Logf("the run's notice:\n%s\n/readyz: %d %s", out, code, body)
	deadline := time.Now().Add(testDeadline)
	for !strings.Contains(b.stderr.String(), `"orchestrator.claims_stopped"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no claims_stopped log line; stderr:\n%s", b.stderr)
		}
		time.Sleep(10 * time.Millisecond) // polling interval of a condition wait
	}
}
