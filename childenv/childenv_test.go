package childenv

import (
	"slices"
	"testing"

	"threadflow/platform"
)

func TestFromDropsSecretsAndKeepsTheRest(t *testing.T) {
	base := []string{"PATH=/usr/bin", "HOME=/home/bot", "DATABASE_URL=postgres://u:p@h/db", "PGPASSWORD=p",
		"DASHBOARD_TOKEN=t", "ANTHROPIC_API_KEY=k", "PAGER=less"}
	for _, name := range platform.SecretEnv() {
		base = append(base, name+"=secret")
	}
	got := From(base, "RUN_ID=r1", "PATH=/opt/bin")
	want := []string{"PATH=/usr/bin", "HOME=/home/bot", "ANTHROPIC_API_KEY=k", "PAGER=less", "RUN_ID=r1", "PATH=/opt/bin"}
	if !slices.Equal(got, want) {
		t.Fatalf("From:\n got %q\nwant %q", got, want)
	}
}

func TestHidden(t *testing.T) {
	for name, want := range map[string]bool{"DATABASE_URL": true, "PGHOST": true, "SLACK_BOT_TOKEN": true, "SESSION_SECRET": true,
		"PATH": false, "OPENAI_API_KEY": false, "GITHUB_TOKEN": false} {
		if Hidden(name) != want {
			t.Errorf("Hidden(%q) = %v, want %v", name, !want, want)
		}
	}
}
