package workflow

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// TriggerKind says how a trigger fires.
type TriggerKind string

// The trigger kinds: a cron schedule, a signed webhook, a GitHub webhook.
const (
	TriggerSchedule TriggerKind = "schedule"
	TriggerWebhook  TriggerKind = "webhook"
	TriggerGitHub   TriggerKind = "github"
)

// Overlap says what a schedule does when the run of its previous fire has not ended (is queued,
// running or paused).
type Overlap string

// Overlap policies; OverlapSkip is the default.
const (
	OverlapSkip  Overlap = "skip"  // the fire is recorded as skipped; no run
	OverlapQueue Overlap = "queue" // the fire waits and starts its run when the previous one ends (one waits at most)
	OverlapAllow Overlap = "allow" // the run starts regardless
)

// CatchUp says what a schedule does with the times it missed (the bot was down).
type CatchUp string

// Catch-up policies; CatchUpOne is the default.
const (
	CatchUpOne  CatchUp = "one"  // one run for all the missed times (at the latest of them)
	CatchUpNone CatchUp = "none" // no run for missed times; the next time fires as usual
)

// Trigger is one entry of a workflow's `triggers:`: a way a run starts without a person typing a
// command. Its runs are requested by Trigger.Requester and talk in PostTo exactly as a typed
// command's runs do.
type Trigger struct {
	Kind TriggerKind
	Name string // unique in the workflow; with the workflow's name it identifies the trigger
	// PostTo is the conversation the run talks in: "slack:<channel>", "discord:<channel>" or "web".
	PostTo string
	Args   Args
	// Schedule: the cron expression as written (5 fields, or 6 with seconds first), its parse,
	// and the time zone it is read in.
	Cron     string
	Schedule cron.Schedule
	Location *time.Location
	Overlap  Overlap
	CatchUp  CatchUp
	// Webhook and GitHub: the environment variable holding the shared secret.
	SecretEnv string
	// GitHub: the events it starts on, as "<X-GitHub-Event>" or "<X-GitHub-Event>.<action>".
	Events    []string
	Line, Col int
}

// ID is the trigger's identity across reloads and replicas: "<workflow>/<name>".
func (t *Trigger) ID(workflow string) string { return workflow + "/" + t.Name }

// Requester is who a trigger's runs are recorded as started by: "trigger:<workflow>/<name>". No
// person has this id, so a gate refusing self-approval lets every allowed person answer.
func (t *Trigger) Requester(workflow string) string { return RequesterPrefix + t.ID(workflow) }

// RequesterPrefix starts the requester id of every run a trigger started.
const RequesterPrefix = "trigger:"

// Next is the first scheduled time after after, in the schedule's time zone; zero for other kinds.
func (t *Trigger) Next(after time.Time) time.Time {
	if t.Schedule == nil {
		return time.Time{}
	}
	return t.Schedule.Next(after.In(t.Location))
}

// Matches reports whether a GitHub event ("issues.labeled", "push") is one the trigger starts on:
// listed as is, or listed without its action.
func (t *Trigger) Matches(event string) bool {
	base, _, _ := strings.Cut(event, ".")
	return slices.Contains(t.Events, event) || slices.Contains(t.Events, base)
}

// Args is what a trigger passes to its run: one text (Text, a template) becomes $ARGUMENTS, or
// named values (Named, each a template) become "name=value" words, one per input, in order. The
// named form is the one typed inputs read: each value stays one value whatever it holds.
type Args struct {
	Text  *Template
	Named []NamedArg
}

// NamedArg is one `args:` entry of the named form.
type NamedArg struct {
	Name  string
	Value *Template
}

// Template is text with ${{ payload.<path> }} and ${{ event }} references, filled from a delivery.
type Template struct {
	parts []templatePart
}

type templatePart struct {
	text string
	ref  []string // nil for text; ["event"] or ["payload", ...path]
}

// UsesPayload reports whether the template reads the delivery.
func (t *Template) UsesPayload() bool {
	for _, p := range t.parts {
		if p.ref != nil && p.ref[0] == "payload" {
			return true
		}
	}
	return false
}

// UsesPayload reports whether any of the args reads the delivery.
func (a Args) UsesPayload() bool {
	if a.Text != nil {
		return a.Text.UsesPayload()
	}
	for _, n := range a.Named {
		if n.Value.UsesPayload() {
			return true
		}
	}
	return false
}

// ArgError is a value a delivery cannot give a trigger's args: the sender's mistake (HTTP 422).
type ArgError struct{ Msg string }

func (e *ArgError) Error() string { return e.Msg }

// maxArgValue bounds one value taken from a payload.
const maxArgValue = 4096

// Fill renders the template from the delivery's decoded JSON payload (nil for none) and its event.
// A missing field is empty text; an object, a list or an over-long value is an *ArgError.
func (t *Template) Fill(payload any, event string) (string, error) {
	var b strings.Builder
	for _, p := range t.parts {
		switch {
		case p.ref == nil:
			b.WriteString(p.text)
		case p.ref[0] == "event":
			b.WriteString(event)
		default:
			v, err := lookup(payload, p.ref[1:])
			if err != nil {
				return "", err
			}
			b.WriteString(v)
		}
	}
	return b.String(), nil
}

// lookup is the scalar at path in a decoded JSON value, as text.
func lookup(v any, path []string) (string, error) {
	name := "payload." + strings.Join(path, ".")
	for _, key := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[key]
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(x) {
				return "", nil
			}
			v = x[i]
		default:
			return "", nil
		}
	}
	var s string
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		s = x
	case bool:
		s = strconv.FormatBool(x)
	case json.Number:
		s = x.String()
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	default:
		return "", &ArgError{Msg: fmt.Sprintf("%s is %s, not text, a number or true/false; name a field inside it", name, jsonKind(v))}
	}
	if len(s) > maxArgValue {
		return "", &ArgError{Msg: fmt.Sprintf("%s is %d bytes; a value taken into args may be at most %d", name, len(s), maxArgValue)}
	}
	return s, nil
}

func jsonKind(v any) string {
	if _, ok := v.([]any); ok {
		return "a list"
	}
	return "an object"
}

// Fill renders the args from a delivery: the text for $ARGUMENTS, and for the named form the
// values by name (named is nil for the text form).
func (a Args) Fill(payload any, event string) (text string, named map[string]string, err error) {
	if a.Text != nil {
		text, err = a.Text.Fill(payload, event)
		return text, nil, err
	}
	if len(a.Named) == 0 {
		return "", nil, nil
	}
	named = make(map[string]string, len(a.Named))
	words := make([]string, 0, len(a.Named))
	for _, n := range a.Named {
		v, err := n.Value.Fill(payload, event)
		if err != nil {
			return "", nil, err
		}
		named[n.Name] = v
		words = append(words, n.Name+"="+quoteWord(v))
	}
	return strings.Join(words, " "), named, nil
}

// quoteWord writes v as one word of a command line: as is when it has no space or quote, else in
// double quotes with backslash, double quote and backtick escaped (as the resume gate writes them).
func quoteWord(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t\n\"'`\\") {
		return v
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "`", "\\`").Replace(v) + `"`
}
