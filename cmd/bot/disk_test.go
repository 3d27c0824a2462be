package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"threadflow/testkit"
)

// smallDisk mounts a tmpfs of size (such as "32m") for the test, or skips when it cannot: mounting
// needs root.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		testkit.Missing(t, "mounting a small tmpfs as THREADFLOW_HOME needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		testkit.Missing(t, "cannot mount a tmpfs: %v: %s", err, out)
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
	deadline := time.Now().Add(testkit.Deadline)
	for !strings.Contains(b.stderr.String(), `"orchestrator.claims_stopped"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no claims_stopped log line; stderr:\n%s", b.stderr)
		}
		time.Sleep(10 * time.Millisecond) // polling interval of a condition wait
	}
}

// When the database itself cannot record anything (SQLite on the full disk, and no reserve because
// MIN_FREE_DISK is off), the thread is told and the lease is given up; each time the run is rescued
// the recovery counts, so a node that fills the disk again and again ends failed instead of looping.
func TestUnrecordableRunIsRescuedWithinTheRecoveryBudget(t *testing.T) {
	home := smallDisk(t, "16m")
	wf := t.TempDir()
	writeFile(t, filepath.Join(wf, "fill.yaml"), "name: fill\nnodes:\n  - id: fill\n    bash: yes 'fill the disk' | head -c 100000000\n")
	env := map[string]string{"THREADFLOW_HOME": home, "WORKFLOWS_DIR": wf, "MIN_FREE_DISK": "0", "LEASE_TTL": "1s",
		"MAX_RECOVERIES": "1", "LOG_LEVEL": "error"}
	b := runBot(t, env, "workflow", "run", "fill")
	for range 2 {
		waitLine(t, b, "It could not even be paused, so it is handed back")
		// An operator frees the disk: the rescue can be written, and the run is counted and retried.
		outputs, _ := filepath.Glob(filepath.Join(home, "runs", "*", "outputs", "*"))
		for _, f := range outputs {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
	}
	err := b.result(t)
	t.Logf("the conversation:\n%s", b.stdout)
	if exitCode(err) != exitFailed || !strings.Contains(b.stdout.String(), "failed") {
		t.Fatalf("workflow run = %v (exit %d), want failed once the recovery budget ran out:\n%s", err, exitCode(err), b.stdout)
	}
}

// A node that succeeds but leaves the disk full makes the database refuse to record its completion:
// the bot releases its reserve, pauses the run for recovery and says which record failed.
func TestUnrecordedCompletionPausesTheRun(t *testing.T) {
	home := smallDisk(t, "32m")
	wf := t.TempDir()
	writeFile(t, filepath.Join(wf, "hog.yaml"), "name: hog\nnodes:\n  - id: hog\n    bash: head -c 100000000 /dev/zero > big; exit 0\n")
	env := map[string]string{"THREADFLOW_HOME": home, "WORKFLOWS_DIR": wf, "MIN_FREE_DISK": "8MB", "LOG_LEVEL": "error"}
	out, code := cli(t, env, "workflow", "run", "hog")
	if code != exitPaused {
		t.Fatalf("workflow run hog = exit %d, want %d (paused, resumable):\n%s", code, exitPaused, out)
	}
	for _, want := range []string{"could not continue and is paused", "the database could not record node_completed of node hog",
		"free disk space or fix the database"} {
		if !strings.Contains(out, want) {
			t.Errorf("the run's notice lacks %q:\n%s", want, out)
		}
	}
}
