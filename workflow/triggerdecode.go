package workflow

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"gopkg.in/yaml.v3"

	"threadflow/platform"
)

var (
	triggerKinds    = []string{string(TriggerSchedule), string(TriggerWebhook), string(TriggerGitHub)}
	scheduleFields  = []string{"name", "cron", "timezone", "args", "post_to", "overlap", "catch_up"}
	webhookFields   = []string{"name", "secret_env", "args", "post_to"}
	githubFields    = []string{"name", "events", "secret_env", "args", "post_to"}
	overlapValues   = []string{string(OverlapSkip), string(OverlapQueue), string(OverlapAllow)}
	catchUpValues   = []string{string(CatchUpOne), string(CatchUpNone)}
	cronParser      = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
	templateRef     = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)
	refSegment      = regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)
	secretEnvName   = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,99}$`)
	githubEventName = regexp.MustCompile(`^[a-z_]{1,64}(\.[a-z_]{1,64})?$`)
)

// processEnv are variables every process relies on: never a trigger's secret, since the bot hides
// a trigger's secret from the processes it starts.
var processEnv = []string{"PATH", "HOME", "USER", "SHELL", "TMPDIR", "LANG", "PWD", "TERM", "LOGNAME", "HOSTNAME"}

// maxTriggers bounds a workflow's triggers.
const maxTriggers = 32

// triggers reads `triggers:`, a list of one-key mappings ({schedule: {...}}, {webhook: {...}},
// {github: {...}}).
func (d *decoder) triggers(f field, w *Workflow) {
	if f.val.Kind != yaml.SequenceNode || len(f.val.Content) == 0 {
		d.errorf(f.val, "`triggers` must be a non-empty list of {schedule: ...}, {webhook: ...} or {github: ...}, found %s", describe(f.val))
		return
	}
	if len(f.val.Content) > maxTriggers {
		d.errorf(f.val, "`triggers` lists %d triggers; a workflow may have at most %d", len(f.val.Content), maxTriggers)
		return
	}
	seen := map[string]int{}
	for _, item := range f.val.Content {
		fs := d.mapping(item, "a trigger", triggerKinds)
		if fs == nil {
			continue
		}
		if len(fs) != 1 {
			d.errorf(item, "a trigger is one of schedule, webhook or github; write each as its own list entry")
			continue
		}
		for kind, kf := range fs {
			t := d.trigger(TriggerKind(kind), kf)
			if t == nil {
				continue
			}
			if line, dup := seen[t.Name]; dup {
				d.errorAt(t.Line, t.Col, "trigger name %q is used twice (first at line %d); give each trigger its own `name`", t.Name, line)
				continue
			}
			seen[t.Name] = t.Line
			w.Triggers = append(w.Triggers, t)
		}
	}
}

func (d *decoder) trigger(kind TriggerKind, f field) *Trigger {
	known := map[TriggerKind][]string{TriggerSchedule: scheduleFields, TriggerWebhook: webhookFields, TriggerGitHub: githubFields}[kind]
	fs := d.mapping(f.val, "`"+string(kind)+"`", known)
	if fs == nil {
		return nil
	}
	t := &Trigger{Kind: kind, Name: string(kind), Line: f.key.Line, Col: f.key.Column}
	if nf, ok := fs["name"]; ok {
		t.Name, _ = d.id(nf)
	} else if kind != TriggerSchedule {
		d.errorf(f.key, "`%s` needs a `name`: it is the last part of its address, POST /hooks/<workflow>/<name>", kind)
	}
	if pf, ok := fs["post_to"]; ok {
		t.PostTo = d.postTo(pf)
	} else {
		d.errorf(f.key, "`%s` needs `post_to`: where its runs talk, like slack:C0123ABCD, discord:<channel id> or web", kind)
	}
	if af, ok := fs["args"]; ok {
		t.Args = d.triggerArgs(af, kind != TriggerSchedule)
	}
	switch kind {
	case TriggerSchedule:
		d.schedule(fs, f, t)
	default:
		t.SecretEnv = d.secretEnv(fs, f)
		if kind == TriggerGitHub {
			t.Events = d.githubEvents(fs, f)
		}
	}
	return t
}

func (d *decoder) schedule(fs map[string]field, f field, t *Trigger) {
	t.Location, t.Overlap, t.CatchUp = time.UTC, OverlapSkip, CatchUpOne
	if zf, ok := fs["timezone"]; ok {
		if s, ok := d.str(zf); ok {
			loc, err := time.LoadLocation(s)
			if err != nil || s == "" || s == "Local" {
				d.errorf(zf.val, "`timezone` %q is not an IANA time zone; write one like Europe/Berlin, America/New_York or UTC", clip(s))
			} else {
				t.Location = loc
			}
		}
	}
	if cf, ok := fs["cron"]; !ok {
		d.errorf(f.key, "`schedule` needs `cron`, like \"0 9 * * 1-5\" (minute hour day month weekday) or with seconds first")
	} else if s, ok := d.str(cf); ok {
		sched, err := cronParser.Parse(s)
		switch {
		case err != nil:
			d.errorf(cf.val, "`cron` %q is not a schedule: %v; write minute hour day-of-month month day-of-week (like \"0 9 * * 1-5\"), optionally with seconds first", clip(s), err)
		case strings.HasPrefix(strings.TrimSpace(s), "TZ=") || strings.HasPrefix(strings.TrimSpace(s), "CRON_TZ="):
			d.errorf(cf.val, "`cron` names its time zone in `timezone`, not with TZ=; move it there")
		case sched.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero():
			d.errorf(cf.val, "`cron` %q never fires (no such date); check the day and month", clip(s))
		default:
			t.Cron, t.Schedule = s, sched
		}
	}
	if of, ok := fs["overlap"]; ok {
		s, _ := d.oneOf(of, overlapValues)
		t.Overlap = Overlap(cmpOr(s, string(OverlapSkip)))
	}
	if cf, ok := fs["catch_up"]; ok {
		s, _ := d.oneOf(cf, catchUpValues)
		t.CatchUp = CatchUp(cmpOr(s, string(CatchUpOne)))
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (d *decoder) secretEnv(fs map[string]field, f field) string {
	sf, ok := fs["secret_env"]
	if !ok {
		d.errorf(f.key, "`%s` needs `secret_env`: the environment variable holding the secret its deliveries are signed with", f.key.Value)
		return ""
	}
	s, ok := d.str(sf)
	switch {
	case !ok:
	case !secretEnvName.MatchString(s):
		d.errorf(sf.val, "`secret_env` %q is not an environment variable name; use capital letters, digits and _, like DEPLOY_HOOK_SECRET", clip(s))
	case slices.Contains(processEnv, s) || slices.Contains(platform.SecretEnv(), s) || strings.HasPrefix(s, "THREADFLOW_"):
		d.errorf(sf.val, "`secret_env` %s is a variable the bot or its processes use for something else; name a variable of its own, like DEPLOY_HOOK_SECRET", s)
	default:
		return s
	}
	return ""
}

func (d *decoder) githubEvents(fs map[string]field, f field) []string {
	ef, ok := fs["events"]
	if !ok {
		d.errorf(f.key, "`github` needs `events`, like [issues.labeled, pull_request.opened, push]")
		return nil
	}
	if ef.val.Kind != yaml.SequenceNode || len(ef.val.Content) == 0 || len(ef.val.Content) > 64 {
		d.errorf(ef.val, "`events` must be a list of 1 to 64 GitHub events, like [issues.labeled, push], found %s", describe(ef.val))
		return nil
	}
	var out []string
	for _, item := range ef.val.Content {
		s, ok := d.str(field{ef.key, item})
		switch {
		case !ok:
		case !githubEventName.MatchString(s):
			d.errorf(item, "event %q is not a GitHub event; write the X-GitHub-Event name, optionally with the payload's action after a dot, like issues.labeled or push", clip(s))
		case slices.Contains(out, s):
			d.errorf(item, "event %q is listed twice; remove one", s)
		default:
			out = append(out, s)
		}
	}
	return out
}

// postTo reads where a trigger's runs talk: a Slack or Discord channel, or the web chat.
func (d *decoder) postTo(f field) string {
	s, ok := d.str(f)
	if !ok {
		return ""
	}
	if s == platform.Console || !validChannel(s) {
		d.errorf(f.val, "`post_to` %q is not a place a run can talk in; write slack:<channel id> (like slack:C0123ABCD), discord:<channel id> or web", clip(s))
		return ""
	}
	return s
}

// triggerArgs reads `args`: text, or a mapping of input names to text; either may hold
// ${{ payload.<path> }} and ${{ event }} when the trigger has a delivery.
func (d *decoder) triggerArgs(f field, delivery bool) Args {
	if f.val.Kind != yaml.MappingNode {
		return Args{Text: d.template(f, delivery)}
	}
	var out Args
	for i := 0; i+1 < len(f.val.Content); i += 2 {
		k, v := f.val.Content[i], f.val.Content[i+1]
		name, ok := d.id(field{k, k})
		if !ok {
			continue
		}
		if slices.ContainsFunc(out.Named, func(n NamedArg) bool { return n.Name == name }) {
			d.errorf(k, "`args` names %s twice; keep one", name)
			continue
		}
		if t := d.template(field{k, v}, delivery); t != nil {
			out.Named = append(out.Named, NamedArg{Name: name, Value: t})
		}
	}
	return out
}

// template parses a text with ${{ }} references.
func (d *decoder) template(f field, delivery bool) *Template {
	if f.val.Kind != yaml.ScalarNode || f.val.ShortTag() == "!!null" {
		d.errorf(f.val, "`%s` must be text, found %s", f.key.Value, describe(f.val))
		return nil
	}
	s := f.val.Value
	t := &Template{}
	last := 0
	for _, m := range templateRef.FindAllStringSubmatchIndex(s, -1) {
		if m[0] > last {
			t.parts = append(t.parts, templatePart{text: s[last:m[0]]})
		}
		last = m[1]
		ref := strings.Split(s[m[2]:m[3]], ".")
		line, col := d.posIn(f.val, m[0])
		switch {
		case !delivery:
			d.errorAt(line, col, "a schedule has no delivery to read; `%s` cannot use ${{ }}; write the arguments as plain text", f.key.Value)
			return nil
		case len(ref) == 1 && ref[0] == "event":
		case len(ref) >= 2 && ref[0] == "payload" && len(ref) <= 16 && !slices.ContainsFunc(ref[1:], func(s string) bool { return !refSegment.MatchString(s) }):
		default:
			d.errorAt(line, col, "%q is not something args can read; write ${{ event }} or ${{ payload.<field>.<field> }} (like ${{ payload.issue.number }})", clip(s[m[0]:m[1]]))
			return nil
		}
		t.parts = append(t.parts, templatePart{ref: ref})
	}
	if rest := s[last:]; rest != "" {
		if i := strings.Index(rest, "${{"); i >= 0 {
			line, col := d.posIn(f.val, last+i)
			d.errorAt(line, col, "`${{` is not closed; write ${{ payload.<field> }} or ${{ event }}")
			return nil
		}
		t.parts = append(t.parts, templatePart{text: rest})
	}
	return t
}

// checkTriggers checks what a trigger needs of the rest of the workflow: that its runs may talk
// where it posts (access.channels), and that named args name declared inputs.
func (d *decoder) checkTriggers(w *Workflow) {
	for _, t := range w.Triggers {
		if t.PostTo != "" && w.Access != nil && len(w.Access.Channels) > 0 && !slices.Contains(w.Access.Channels, t.PostTo) &&
			!slices.Contains(w.Access.Channels, strings.SplitN(t.PostTo, ":", 2)[0]) {
			d.errorAt(t.Line, t.Col, "trigger %s posts to %s, which `access.channels` does not list; add it there or post elsewhere", t.Name, t.PostTo)
		}
		if len(t.Args.Named) == 0 || len(w.Inputs) == 0 {
			continue
		}
		for _, n := range t.Args.Named {
			if !slices.ContainsFunc(w.Inputs, func(in Input) bool { return in.Name == n.Name }) {
				d.errorAt(t.Line, t.Col, "trigger %s gives args %s, which is not one of the workflow's inputs; declare it under `inputs` or remove it", t.Name, n.Name)
			}
		}
	}
}
