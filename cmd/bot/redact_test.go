package main

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"threadflow/childenv"
	"threadflow/platform"
)

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"postgres://u:pw@h:5432/d?sslmode=disable", "postgres://u:xxxxx@h:5432/d?sslmode=disable"},
		{"postgres://u@h/d", "postgres://u@h/d"},
		{"postgres://h/d?password=pw&sslmode=require", "postgres://h/d?password=xxxxx&sslmode=require"},
		{"host=h password=pw", "(unparsable, hidden)"},
	}
	for _, tt := range tests {
		if got := redactURL(tt.in); got != tt.want {
			t.Errorf("redactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestScrub(t *testing.T) {
	got := scrub("auth failed for tok-123 at pw", []string{"", "tok-123", "pw"})
	if want := "auth failed for xxxxx at xxxxx"; got != want {
		t.Errorf("scrub = %q, want %q", got, want)
	}
}

// A chat platform's credentials are secret because the platform list says so: no flag sets them,
// errors hide them, and messages that quote them are scrubbed.
func TestPlatformCredentialsAreSecret(t *testing.T) {
	env := map[string]string{}
	for _, name := range platform.SecretEnv() {
		env[name] = "cred-" + name
	}
	scrubbed := secretValues(envOf(env))
	for _, name := range platform.SecretEnv() {
		i := slices.IndexFunc(settings, func(s setting) bool { return s.env == name })
		if i < 0 {
			t.Errorf("%s is a platform credential but no setting reads it", name)
			continue
		}
		if !settings[i].isSecret() {
			t.Errorf("%s is not a secret setting", name)
		}
		if !slices.Contains(scrubbed, "cred-"+name) {
			t.Errorf("the value of %s is not scrubbed from messages", name)
		}
	}
}

func TestExitCode(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{nil, 0},
		{&usageError{"bad"}, 2},
		{fmt.Errorf("serve: %w", &settingError{Name: "X"}), 2},
		{errors.New("database down"), 1},
		{fmt.Errorf("workflow: %w", statusError(3)), 3},
	}
	for _, tt := range tests {
		if got := exitCode(tt.err); got != tt.want {
			t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

// statusError is an error choosing its exit status.
type statusError int

func (e statusError) Error() string { return fmt.Sprintf("status %d", int(e)) }
func (e statusError) ExitCode() int { return int(e) }

// Every secret setting, and the database URL, is kept from the processes runs start (childenv
// holds the one list they are filtered by).
func TestSecretSettingsAreKeptFromChildren(t *testing.T) {
	for _, s := range settings {
		if (s.isSecret() || s.env == "DATABASE_URL") && !childenv.Hidden(s.env) {
			t.Errorf("%s is secret but childenv passes it to shell, script and agent processes; add it to childenv's list", s.env)
		}
	}
}
