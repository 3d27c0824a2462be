package main

import (
	"bytes"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"threadflow/testkit"
	"time"
)

// lineWriter collects output and hands each complete line to lines, so a test can wait for a line
// with a deadline instead of sleeping.
type lineWriter struct {
	mu      sync.Mutex
	all     bytes.Buffer
	partial []byte
	lines   chan string
}

func newLineWriter() *lineWriter { return &lineWriter{lines: make(chan string, 256)} }

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all.Write(p)
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		select {
		case w.lines <- string(w.partial[:i]):
		default: // nobody waits for this many lines; all keeps them
		}
		w.partial = w.partial[i+1:]
	}
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.all.String()
}

var upLine = regexp.MustCompile(`^Threadflow is up: (http://127\.0\.0\.1:[0-9]+/)$`)

// waitURL waits for the "Threadflow is up" line and returns its URL. exited is closed when the
// bot stopped, so a failed start fails the test at once with its stderr.
func waitURL(t *testing.T, stdout *lineWriter, exited <-chan struct{}, stderr *lineWriter) string {
	t.Helper()
	deadline := time.After(testkit.Deadline)
	for {
		select {
		case line := <-stdout.lines:
			if m := upLine.FindStringSubmatch(line); m != nil {
				if strings.HasSuffix(m[1], ":0/") {
					t.Fatalf("the up line shows port 0, not the port listened on: %q", line)
				}
				return m[1]
			}
			t.Fatalf("unexpected stdout line before the up line: %q", line)
		case <-exited:
			t.Fatalf("bot exited before it was up; stderr:\n%s", stderr.String())
		case <-deadline:
			t.Fatalf("bot not up after %s; stderr:\n%s", testkit.Deadline, stderr.String())
		}
	}
}

// get fetches url and returns the status and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	c := http.Client{Timeout: testkit.Deadline}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", url, err)
	}
	return resp.StatusCode, string(body)
}

// assertReady checks the bot at base answers /healthz and /readyz with 200.
func assertReady(t *testing.T, base string) {
	t.Helper()
	for _, path := range []string{"healthz", "readyz"} {
		if code, body := get(t, base+path); code != http.StatusOK || body != "ok\n" {
			t.Errorf("GET /%s = %d %q, want 200 \"ok\\n\"", path, code, body)
		}
	}
}
