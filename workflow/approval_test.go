package workflow

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"threadflow/db"
)

func TestApprovalPolicyAndTimers(t *testing.T) {
	t.Parallel()
	src := `name: x
nodes:
  - id: confirm
    approval:
      message: Ship it?
      approvers: ["slack:U123", "discord:4567", "console:alice", "@admins"]
      allow_self_approval: false
      required_approvals: 2
      timeout: 24h
      on_timeout: abandon
      remind_after: 4h
`
	w := mustParse(t, "wf.yaml", []byte(src))
	want := Approval{Message: "Ship it?", Policy: db.GatePolicy{Approvers: []string{"slack:U123", "discord:4567", "console:alice"}, Admins: true,
		AllowSelfApproval: false, Required: 2, Notify: db.NotifyMention}, Timeout: 24 * time.Hour, OnTimeout: TimeoutAbandon, RemindAfter: 4 * time.Hour}
	if got := *w.Node("confirm").Approval; !reflect.DeepEqual(got, want) {
		t.Errorf("approval =\n%+v\nwant\n%+v", got, want)
	}
}

func TestApprovalNotifications(t *testing.T) {
	t.Parallel()
	head := "name: x\nnodes:\n  - id: g\n    approval:\n"
	tests := []struct {
		name, src  string
		notify     string
		escalateTo []string
		admins     bool
		after      time.Duration
	}{
		{"approvers default to mention", "      approvers: [\"slack:group:S1\"]\n", db.NotifyMention, nil, false, 0},
		{"anyone defaults to none", "      message: ok?\n", "", nil, false, 0},
		{"none is stored as nothing", "      approvers: [\"slack:U1\"]\n      notify: none\n", "", nil, false, 0},
		{"dm", "      approvers: [\"@admins\"]\n      notify: dm\n", db.NotifyDM, nil, false, 0},
		{"escalation alone tells by mention", "      escalate_after: 2h\n      escalate_to: [\"discord:role:42\", \"@admins\"]\n",
			db.NotifyMention, []string{"discord:role:42"}, true, 2 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := mustParse(t, "wf.yaml", []byte(head+tt.src)).Node("g").Approval
			p := a.Policy
			if p.Notify != tt.notify || !reflect.DeepEqual([]string(p.EscalateTo), tt.escalateTo) || p.EscalateAdmins != tt.admins || a.EscalateAfter != tt.after {
				t.Errorf("notify %q, escalate_to %v (admins %v) after %s; want %q, %v (%v) after %s",
					p.Notify, p.EscalateTo, p.EscalateAdmins, a.EscalateAfter, tt.notify, tt.escalateTo, tt.admins, tt.after)
			}
		})
	}
}

func TestApprovalTimeoutOnTheNode(t *testing.T) {
	t.Parallel()
	src := "name: x\nnodes:\n  - id: g\n    timeout: 30s\n    on_timeout: reject\n    approval:\n      message: ok?\n      remind_after: 10s\n"
	w := mustParse(t, "wf.yaml", []byte(src))
	g := w.Node("g")
	if a := g.Approval; a.Timeout != 30*time.Second || a.OnTimeout != TimeoutReject || a.RemindAfter != 10*time.Second || g.Timeout != 0 {
		t.Errorf("approval %+v, node timeout %s; want the node's timeout to be the gate's", *a, g.Timeout)
	}
}

func TestApprovalErrors(t *testing.T) {
	t.Parallel()
	head := "name: x\nnodes:\n  - id: g\n"
	tests := []struct {
		name, src, want string
	}{
		{"approver without platform", head + "    approval: {approvers: [U123]}\n",
			`wf.yaml:4:28: approver "U123" is not a user id; write the platform and the id, like slack:U0123ABCD`},
		{"unknown platform", head + "    approval: {approvers: [\"slak:U1\"]}\n", `approver "slak:U1" is not a user id`},
		{"empty approvers", head + "    approval: {approvers: []}\n", "`approvers` must be a non-empty list"},
		{"approver twice", head + "    approval: {approvers: [\"slack:U1\", \"slack:U1\"]}\n", `approver "slack:U1" is listed twice`},
		{"too many required", head + "    approval: {approvers: [\"slack:U1\"], required_approvals: 2}\n",
			"`required_approvals` is 2 but `approvers` lists only 1, so the gate could never open"},
		{"zero required", head + "    approval: {required_approvals: 0}\n", "`required_approvals` must be between 1 and 20, found 0"},
		{"self approval not a bool", head + "    approval: {allow_self_approval: nope}\n", "`allow_self_approval` must be true or false"},
		{"days", head + "    approval: {timeout: 2d}\n", "`timeout` is not a duration: \"2d\""},
		{"zero timeout", head + "    approval: {timeout: 0s}\n", "`timeout` must be between 1s and 8760h0m0s (a year), found 0s"},
		{"on_timeout alone", head + "    approval: {on_timeout: reject}\n", "`on_timeout` needs a `timeout` to act on"},
		{"unknown on_timeout", head + "    approval: {timeout: 1h, on_timeout: approve}\n", "`on_timeout` \"approve\" is not accepted; use one of: reject, abandon"},
		{"late reminder", head + "    approval: {timeout: 1h, remind_after: 2h}\n", "`remind_after` (2h0m0s) must be shorter than `timeout` (1h0m0s)"},
		{"timer twice", head + "    timeout: 1h\n    approval: {timeout: 2h}\n", "`timeout` is set both on the node and inside `approval:`"},
		{"timer on a shell node", head + "    on_timeout: reject\n    bash: echo\n", "`on_timeout` applies only to approval nodes"},
		{"unknown notify", head + "    approval: {approvers: [\"slack:U1\"], notify: email}\n",
			"wf.yaml:4:49: `notify` \"email\" is not accepted; use one of: mention, dm, none"},
		{"notify nobody", head + "    approval: {notify: dm}\n", "wf.yaml:4:24: `notify: dm` has nobody to tell"},
		{"escalate_to alone", head + "    approval: {approvers: [\"slack:U1\"], escalate_to: [\"@admins\"]}\n",
			"wf.yaml:4:41: `escalate_to` needs an `escalate_after`"},
		{"escalate_after alone", head + "    approval: {escalate_after: 1h}\n", "wf.yaml:4:16: `escalate_after` needs an `escalate_to`"},
		{"late escalation", head + "    approval: {timeout: 1h, escalate_after: 1h, escalate_to: [\"@admins\"]}\n",
			"wf.yaml:4:45: `escalate_after` (1h0m0s) must be shorter than `timeout` (1h0m0s)"},
		{"escalate to nobody", head + "    approval: {escalate_after: 1h, escalate_to: [U1]}\n", `escalate_to entry "U1" is not a user id`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("wf.yaml", []byte(tt.src))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse error = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}
