package platform

import (
	"slices"
	"testing"
)

func TestSplitUserID(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		id, name, user string
		ok             bool
	}{
		{"slack:U1", Slack, "U1", true},
		{"web:alice", Web, "alice", true},
		{"console:a:b", Console, "a:b", true}, // the id's characters are the caller's to check
		{"teams:U1", "teams", "U1", false},
		{"slack:", Slack, "", false},
		{"U1", "U1", "", false},
	} {
		name, user, ok := SplitUserID(c.id)
		if name != c.name || user != c.user || ok != c.ok {
			t.Errorf("SplitUserID(%q) = %q, %q, %v; want %q, %q, %v", c.id, name, user, ok, c.name, c.user, c.ok)
		}
	}
}

func TestExamplesNameEveryPlatform(t *testing.T) {
	t.Parallel()
	if got, want := Examples(), "slack:U0123ABCD, discord:80351110224678912, console:alice or web:alice"; got != want {
		t.Errorf("Examples() = %q, want %q", got, want)
	}
}

func TestSecretEnv(t *testing.T) {
	t.Parallel()
	if got := SecretEnv(); !slices.Equal(got, []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "DISCORD_BOT_TOKEN"}) {
		t.Errorf("SecretEnv() = %v", got)
	}
}
