package platform

import (
	"slices"
	"strings"
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

// The tests below hold for any list of platforms, so adding one touches only platform.go.

func TestExamplesNameEveryPlatform(t *testing.T) {
	t.Parallel()
	got := Examples()
	if want := "slack:U0123ABCD, discord:80351110224678912, console:alice"; !strings.HasPrefix(got, want) {
		t.Errorf("Examples() = %q, want it to start %q", got, want)
	}
	for _, s := range specs {
		if !strings.Contains(got, s.Name+":"+s.ExampleUser) {
			t.Errorf("Examples() = %q lacks %s", got, s.Name)
		}
	}
	if strings.Count(got, " or ") != 1 || !strings.Contains(got, " or "+specs[len(specs)-1].Name+":") {
		t.Errorf("Examples() = %q does not end with \"or\" and the last platform", got)
	}
}

func TestSecretEnv(t *testing.T) {
	t.Parallel()
	got := SecretEnv()
	for _, name := range []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "DISCORD_BOT_TOKEN"} {
		if !slices.Contains(got, name) {
			t.Errorf("SecretEnv() = %v lacks %s", got, name)
		}
	}
}

func TestGroups(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		entry, name, group string
		ok                 bool
	}{
		{"slack:group:S1", Slack, "S1", true},
		{"discord:role:42", Discord, "42", true},
		{"slack:role:S1", "", "", false},
		{"discord:group:42", "", "", false},
		{"web:group:x", "", "", false},
		{"slack:group:", "", "", false},
		{"slack:U1", "", "", false},
		{"slack:group:S1:x", "", "", false},
	} {
		name, group, ok := SplitGroup(c.entry)
		if ok != c.ok || (ok && (name != c.name || group != c.group)) {
			t.Errorf("SplitGroup(%q) = %q, %q, %v; want %q, %q, %v", c.entry, name, group, ok, c.name, c.group, c.ok)
		}
	}
	list := People{"slack:U1", "slack:group:S1", "discord:role:R1"}
	for _, c := range []struct {
		id       string
		memberOf []string
		want     bool
	}{
		{"slack:U1", nil, true},
		{"slack:U2", nil, false},
		{"slack:U2", []string{"slack:group:S1"}, true},
		{"slack:U2", []string{"slack:group:S2"}, false},
		{"discord:9", []string{"discord:role:R1"}, true},
		{"slack:U2", []string{"slack:U1"}, false}, // a membership is a group, never another person
	} {
		if got := list.Includes(c.id, c.memberOf); got != c.want {
			t.Errorf("Includes(%q, %q) = %v, want %v", c.id, c.memberOf, got, c.want)
		}
	}
	if g := list.Groups(); !slices.Equal(g, []string{"slack:group:S1", "discord:role:R1"}) {
		t.Errorf("Groups() = %q", g)
	}
}
