package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"
	"testing"

	"threadflow/db"
)

func TestClassifyText(t *testing.T) {
	tests := []struct {
		text    string
		resumed bool
		want    db.ErrorClass
	}{
		{"No conversation found with session ID: 123", true, db.ClassStaleSession},
		{"No conversation found with session ID: 123", false, db.ClassPermanent},
		{"thread/resume failed: no rollout found for thread id x", true, db.ClassStaleSession},
		{"No saved session found with ID abc", true, db.ClassStaleSession},
		{"Invalid API key · Please run /login", false, db.ClassInfra},
		{"Invalid API key · Please run /login", true, db.ClassInfra},
		{"unexpected status 401 Unauthorized", false, db.ClassInfra},
		{"open /repo/x: permission denied", false, db.ClassInfra},
		{`API Error: 429 {"type":"rate_limit_error"}`, false, db.ClassTransient},
		{"API Error: 529 Overloaded", false, db.ClassTransient},
		{"API Error: 503 Service Unavailable", false, db.ClassTransient},
		{"request timed out", false, db.ClassTransient},
		{"read ECONNRESET", false, db.ClassTransient},
		{"fetch failed: network error", false, db.ClassTransient},
		{"Error: max turns reached", false, db.ClassPermanent},
		{"wrote 4290 lines", false, db.ClassPermanent},
		{"", false, db.ClassPermanent},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/resumed=%v", tt.text, tt.resumed), func(t *testing.T) {
			if got := classifyText(tt.text, tt.resumed); got != tt.want {
				t.Errorf("classifyText = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestClassOf(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want db.ErrorClass
	}{
		{"nil", nil, ""},
		{"agent error", &Error{Class: db.ClassStaleSession}, db.ClassStaleSession},
		{"wrapped agent error", fmt.Errorf("node x: %w", &Error{Class: db.ClassTransient}), db.ClassTransient},
		{"binary not found", fmt.Errorf("start: %w", exec.ErrNotFound), db.ClassInfra},
		{"permission", &fs.PathError{Op: "fork/exec", Path: "/x", Err: fs.ErrPermission}, db.ClassInfra},
		{"deadline", context.DeadlineExceeded, db.ClassTransient},
		{"anything else", errors.New("boom"), db.ClassPermanent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ClassOf(tt.err); got != tt.want {
				t.Errorf("ClassOf = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestErrorMessageAndUnwrap(t *testing.T) {
	cause := errors.New("exit status 1")
	e := &Error{Class: db.ClassPermanent, Msg: "Codex failed: boom", Err: cause}
	if e.Error() != "Codex failed: boom: exit status 1" || !errors.Is(e, cause) {
		t.Errorf("Error() = %q, Is(cause) = %v", e.Error(), errors.Is(e, cause))
	}
	if (&Error{Msg: "only"}).Error() != "only" {
		t.Error("an Error without a cause must print its message alone")
	}
}

func TestDetail(t *testing.T) {
	tests := map[string]string{
		"\n\n  first line  \nsecond": "first line",
		"tab\there\x1b[31mred":       "tab here [31mred",
		"bad \xff utf8":              "bad ? utf8",
		strings.Repeat("é", 300):     strings.Repeat("é", maxDetail) + "…",
		"":                           "",
	}
	for in, want := range tests {
		if got := detail(in); got != want {
			t.Errorf("detail(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedact(t *testing.T) {
	prompt := "deploy the secret project now\nok\nand tell nobody about it"
	stderr := "error near: deploy the secret project now\nok\nfatal: and tell nobody about it"
	got := redact(stderr, prompt)
	if strings.Contains(got, "secret project") || strings.Contains(got, "tell nobody") {
		t.Errorf("redact left prompt text: %q", got)
	}
	if !strings.Contains(got, "ok\nfatal:") {
		t.Errorf("redact mangled short lines: %q", got)
	}
}
