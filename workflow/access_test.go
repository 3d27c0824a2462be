package workflow

import (
	"reflect"
	"strings"
	"testing"

	"threadflow/platform"
)

func TestAccess(t *testing.T) {
	t.Parallel()
	src := `name: release
access:
  run: ["slack:U1", "slack:group:S1", "discord:role:42", "@admins"]
  channels: ["slack:C1", "discord:99", web]
nodes:
  - id: g
    approval:
      approvers: ["slack:group:S2", "discord:role:43"]
`
	w := mustParse(t, "wf.yaml", []byte(src))
	want := &Access{Run: platform.People{"slack:U1", "slack:group:S1", "discord:role:42"}, RunAdmins: true, Channels: []string{"slack:C1", "discord:99", "web"}}
	if !reflect.DeepEqual(w.Access, want) {
		t.Fatalf("access = %+v, want %+v", w.Access, want)
	}
	if got := w.Node("g").Approval.Policy.Approvers; !reflect.DeepEqual(got, platform.People{"slack:group:S2", "discord:role:43"}) {
		t.Errorf("approvers = %q", got)
	}
	a := w.Access
	for _, c := range []struct {
		id       string
		memberOf []string
		admin    bool
		want     bool
	}{
		{"slack:U1", nil, false, true},
		{"slack:U2", nil, false, false},
		{"slack:U2", []string{"slack:group:S1"}, false, true},
		{"discord:7", []string{"discord:role:42"}, false, true},
		{"console:local", nil, true, true},
	} {
		if got := a.MayRun(c.id, c.memberOf, c.admin); got != c.want {
			t.Errorf("MayRun(%q, %q, %v) = %v, want %v", c.id, c.memberOf, c.admin, got, c.want)
		}
	}
	for _, c := range []struct {
		platform, channel string
		want              bool
	}{
		{"slack", "C1", true}, {"slack", "C2", false}, {"discord", "99", true}, {"web", "lobby", true}, {"console", "cli", false},
	} {
		if got := a.AllowsChannel(c.platform, c.channel); got != c.want {
			t.Errorf("AllowsChannel(%q, %q) = %v, want %v", c.platform, c.channel, got, c.want)
		}
	}
	var none *Access // no `access`: anyone, anywhere
	if !none.MayRun("slack:U9", nil, false) || !none.AllowsChannel("slack", "C9") {
		t.Error("a workflow without access refuses someone")
	}
}

func TestAccessErrors(t *testing.T) {
	t.Parallel()
	tail := "nodes:\n  - id: a\n    bash: echo\n"
	for _, tt := range []struct{ name, access, want string }{
		{"unknown field", "access: {who: [\"slack:U1\"]}\n", "wf.yaml:2:10: unknown field `who` in `access`"},
		{"empty", "access: {}\n", "wf.yaml:2:9: `access` needs `run` (who may start the workflow), `channels` (where), or both"},
		{"bad person", "access: {run: [alice]}\n", "wf.yaml:2:16: `access.run` entry \"alice\" is not a user id; write the platform and the id"},
		{"bad group", "access: {run: [\"slack:group:\"]}\n", "`access.run` entry \"slack:group:\" is not a user id"},
		{"empty run", "access: {run: []}\n", "`access.run` must be a non-empty list"},
		{"bad channel", "access: {channels: [\"#general\"]}\n", "wf.yaml:2:21: channel \"#general\" is not a channel; write slack:<channel id>"},
		{"web channel", "access: {channels: [\"web:lobby\"]}\n", "channel \"web:lobby\" is not a channel"},
		{"channel twice", "access: {channels: [web, web]}\n", "channel \"web\" is listed twice"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("wf.yaml", []byte("name: x\n"+tt.access+tail))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse error = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}
