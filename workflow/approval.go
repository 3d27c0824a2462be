package workflow

import (
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"threadflow/db"
	"threadflow/platform"
)

var (
	approvalFields = []string{"message", "capture_response", "approvers", "allow_self_approval", "required_approvals",
		"timeout", "on_timeout", "remind_after", "notify", "escalate_after", "escalate_to"}
	onTimeouts = []string{string(TimeoutReject), string(TimeoutAbandon)}
	notifies   = []string{db.NotifyMention, db.NotifyDM, db.NotifyNone}
)

// Approval is a gate that pauses the run until a person approves or rejects it, and says who may
// answer it and how long it waits.
type Approval struct {
	Message         string
	CaptureResponse bool // the approvers' notes become the node's output

	// Policy is who may answer, as the store enforces it: approvers (with `@admins` as Admins),
	// allow_self_approval (default true) and required_approvals (Required; 1 is stored as 0). It is
	// the very value frozen into the pause, so a rule is declared once, in db.GatePolicy.
	Policy db.GatePolicy

	Timeout     time.Duration // 0: wait until answered
	OnTimeout   OnTimeout     // what a timeout does (default reject)
	RemindAfter time.Duration // 0: no reminder; otherwise one reminder in the run's thread
	// EscalateAfter: when the gate escalates to Policy.EscalateTo (0: never), counted from when
	// it was asked, like the other timers.
	EscalateAfter time.Duration
}

// OnTimeout says what happens to a gate nobody answered in time.
type OnTimeout string

// Timeout actions. Both end the run; they differ in what is recorded and said.
const (
	TimeoutReject  OnTimeout = "reject"  // the gate is rejected, as if someone had said no
	TimeoutAbandon OnTimeout = "abandon" // the run is abandoned, as /workflow abandon would
)

// AdminsApprover in `approvers` stands for every id in ADMIN_USER_IDS.
const AdminsApprover = "@admins"

// Bounds of gate settings: enough for any real review, small enough that a typo cannot park a run
// for years or ask for approvals nobody can give.
const (
	maxApprovers         = 100
	maxRequiredApprovals = 20
	maxGateWait          = 365 * 24 * time.Hour
)

func (d *decoder) approval(f field, m *nodeMeta) *Approval {
	a := &Approval{Policy: db.GatePolicy{AllowSelfApproval: true}, OnTimeout: TimeoutReject}
	if f.val.ShortTag() == "!!null" {
		return a // `approval:` alone is a plain gate
	}
	fs := d.mapping(f.val, "`approval`", approvalFields)
	if g, ok := fs["message"]; ok {
		a.Message, _ = d.str(g)
		m.texts = append(m.texts, text{"`approval.message`", g.val})
	}
	if g, ok := fs["capture_response"]; ok {
		a.CaptureResponse = d.boolean(g)
	}
	if g, ok := fs["approvers"]; ok {
		a.Policy.Approvers, a.Policy.Admins = d.approvers(g)
	}
	if g, ok := fs["allow_self_approval"]; ok {
		a.Policy.AllowSelfApproval = d.boolean(g)
	}
	if g, ok := fs["required_approvals"]; ok {
		d.requiredApprovals(g, a)
	}
	d.notifications(fs, a)
	return a
}

// notifications reads notify, escalate_to and escalate_after (its duration; escalation's bounds
// are checked with the other timers, checkEscalation). notify defaults to mention when the gate
// names people to tell (approvers or escalate_to), else none.
func (d *decoder) notifications(fs map[string]field, a *Approval) {
	p := &a.Policy
	if g, ok := fs["escalate_to"]; ok {
		p.EscalateTo, p.EscalateAdmins = d.people(g, "escalate_to", "escalate_to entry", "remove it with `escalate_after` to escalate to nobody")
	}
	if g, ok := fs["escalate_after"]; ok {
		a.EscalateAfter = d.gateDuration(g)
	}
	named := p.Restricted() || p.Escalates()
	p.Notify = db.NotifyMention
	if !named {
		p.Notify = ""
	}
	g, ok := fs["notify"]
	if !ok {
		return
	}
	s, ok := d.oneOf(g, notifies)
	switch {
	case !ok:
	case s == db.NotifyNone:
		p.Notify = ""
	case !named:
		d.errorf(g.val, "`notify: %s` has nobody to tell: the gate lists no `approvers` and no `escalate_to`; list them, or remove `notify`", s)
	default:
		p.Notify = s
	}
}

// checkEscalation checks that escalate_after and escalate_to come together, and that the gate
// escalates while it still waits.
func (d *decoder) checkEscalation(inner *yaml.Node, a *Approval) {
	after, hasAfter := innerField(inner, "escalate_after")
	to, hasTo := innerField(inner, "escalate_to")
	switch {
	case hasTo && !hasAfter:
		d.errorf(to.key, "`escalate_to` needs an `escalate_after` saying when; add `escalate_after: 4h` (any Go duration) next to it")
	case hasAfter && !hasTo:
		d.errorf(after.key, "`escalate_after` needs an `escalate_to` saying to whom; add `escalate_to: [\"@admins\"]` (ids, groups or @admins)")
	case hasAfter && a.Timeout > 0 && a.EscalateAfter >= a.Timeout:
		d.errorf(after.val, "`escalate_after` (%s) must be shorter than `timeout` (%s), or the gate would close before it escalated", a.EscalateAfter, a.Timeout)
		a.EscalateAfter = 0
	}
}

// approvers reads the list of who may answer a gate.
func (d *decoder) approvers(f field) (platform.People, bool) {
	return d.people(f, "approvers", "approver", "remove it to let anyone allowed answer")
}

// people reads a list of people (`approvers`, `access.run`): platform-qualified user ids, groups
// (platform.People) and @admins, which comes back as the flag. noun names one entry in messages;
// unset says how to do without the list.
func (d *decoder) people(f field, key, noun, unset string) (platform.People, bool) {
	if f.val.Kind != yaml.SequenceNode || len(f.val.Content) == 0 {
		d.errorf(f.val, "`%s` must be a non-empty list like [\"slack:U123\", \"slack:group:S123\", \"@admins\"], found %s; %s", key, describe(f.val), unset)
		return nil, false
	}
	if len(f.val.Content) > maxApprovers {
		d.errorf(f.val, "`%s` lists %d entries; at most %d are allowed (use a group or @admins for more people)", key, len(f.val.Content), maxApprovers)
		return nil, false
	}
	var ids platform.People
	admins := false
	for _, item := range f.val.Content {
		id, ok := d.str(field{f.key, item})
		switch {
		case !ok:
		case id == AdminsApprover:
			admins = true
		case !validPerson(id):
			d.errorf(item, "%s %q is not a user id; write the platform and the id, like %s, a group like %s, or %s",
				noun, clip(id), platform.Examples(), platform.GroupExamples, AdminsApprover)
		case contains(ids, id):
			d.errorf(item, "%s %q is listed twice; remove one", noun, id)
		default:
			ids = append(ids, id)
		}
	}
	return ids, admins
}

// validPerson reports whether id is platform:user with a known platform and no spaces, or a group.
func validPerson(id string) bool {
	if platform.IsGroup(id) {
		return len(id) <= 200 && plainID(id)
	}
	_, user, ok := platform.SplitUserID(id)
	return ok && len(id) <= 200 && plainID(user) && !strings.Contains(user, ":")
}

// plainID reports whether s has no spaces or control characters.
func plainID(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) < 0
}

func (d *decoder) requiredApprovals(f field, a *Approval) {
	n, ok := d.integer(f)
	p := &a.Policy
	switch {
	case !ok:
	case n < 1 || n > maxRequiredApprovals:
		d.errorf(f.val, "`required_approvals` must be between 1 and %d, found %d", maxRequiredApprovals, n)
	case len(p.Approvers) > 0 && !p.Admins && n > len(p.Approvers):
		d.errorf(f.val, "`required_approvals` is %d but `approvers` lists only %d, so the gate could never open; list more approvers or lower it", n, len(p.Approvers))
	case n > 1: // 1 is the default, stored as 0 so a plain gate's policy stays empty
		p.Required = n
	}
}

// gateTimers reads timeout, on_timeout and remind_after of an approval.
func (d *decoder) gateTimers(fs map[string]field, a *Approval) {
	if g, ok := fs["timeout"]; ok {
		a.Timeout = d.gateDuration(g)
	}
	if g, ok := fs["on_timeout"]; ok {
		if s, ok := d.oneOf(g, onTimeouts); ok {
			a.OnTimeout = OnTimeout(s)
		}
		if _, ok := fs["timeout"]; !ok {
			d.errorf(g.key, "`on_timeout` needs a `timeout` to act on; add `timeout: 24h` (any Go duration) next to it")
		}
	}
	if g, ok := fs["remind_after"]; ok {
		a.RemindAfter = d.gateDuration(g)
		if a.Timeout > 0 && a.RemindAfter >= a.Timeout {
			d.errorf(g.val, "`remind_after` (%s) must be shorter than `timeout` (%s), or the reminder would come after the gate closed", a.RemindAfter, a.Timeout)
			a.RemindAfter = 0
		}
	}
}

// gateDuration reads a wait of a gate: more than zero and at most a year.
func (d *decoder) gateDuration(f field) time.Duration {
	t, ok := d.duration(f)
	switch {
	case !ok:
		return 0
	case t < time.Second || t > maxGateWait:
		d.errorf(f.val, "`%s` must be between 1s and %s (a year), found %s; Go durations have no days, so write 48h for two days", f.key.Value, maxGateWait, t)
		return 0
	}
	return t
}

// gateTimerFields reads the gate timers of an approval node. They belong inside `approval:`, but
// `timeout` on an approval node can only mean how long the gate waits, so the node-level spelling
// is accepted too; giving one in both places is refused, so the file says one thing.
func (d *decoder) gateTimerFields(fs map[string]field, a *Approval) {
	merged := map[string]field{}
	inner := fs["approval"].val
	for _, key := range []string{"timeout", "on_timeout", "remind_after"} {
		in, hasIn := innerField(inner, key)
		out, hasOut := fs[key]
		switch {
		case hasIn && hasOut:
			d.errorf(out.key, "`%s` is set both on the node and inside `approval:`; keep the one inside `approval:`", key)
			merged[key] = in
		case hasIn:
			merged[key] = in
		case hasOut:
			merged[key] = out
		}
	}
	d.gateTimers(merged, a)
	d.checkEscalation(inner, a)
}

// innerField returns the field key of the mapping m, if m is a mapping that has it.
func innerField(m *yaml.Node, key string) (field, bool) {
	if m == nil || m.Kind != yaml.MappingNode {
		return field{}, false
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return field{m.Content[i], m.Content[i+1]}, true
		}
	}
	return field{}, false
}
