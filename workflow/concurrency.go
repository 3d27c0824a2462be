package workflow

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// WhenBusy says what a run does when its concurrency group is held by another run.
type WhenBusy string

// The answers to a busy group. Queue is the default.
const (
	WhenBusyQueue  WhenBusy = "queue"  // wait in line, oldest first, and start when the group is free
	WhenBusyRefuse WhenBusy = "refuse" // start nothing and name the run holding the group
)

// MaxGroupName bounds a concurrency group's name once its inputs are filled in.
const MaxGroupName = 200

// Concurrency is a workflow's concurrency group (GitHub Actions' `concurrency`): at most one run of
// a group is active at a time, across every replica sharing the database (the store enforces it).
type Concurrency struct {
	Group    string // may read ${inputs.name}
	WhenBusy WhenBusy
}

var concurrencyFields = []string{"group", "when_busy"}

func (d *decoder) concurrency(f field, inputs []Input) *Concurrency {
	fs := d.mapping(f.val, "`concurrency`", concurrencyFields)
	if fs == nil {
		return nil
	}
	c := &Concurrency{WhenBusy: WhenBusyQueue}
	gf, ok := fs["group"]
	if !ok {
		d.errorf(f.val, "`concurrency` needs a `group`, such as `group: release-${inputs.env}`")
		return nil
	}
	if c.Group, ok = d.nonEmpty(gf); !ok {
		return nil
	}
	if len(c.Group) > MaxGroupName {
		d.errorf(gf.val, "`group` may be at most %d bytes", MaxGroupName)
	}
	typed := (&Workflow{Inputs: inputs}).Typed()
	eachRef(c.Group, func(start int, r ref) {
		line, col := d.posIn(gf.val, start)
		switch {
		case r.input == "":
			d.errorAt(line, col, "`group` may read only ${inputs.<name>}; other variables are not known when a run is created")
		case !typed:
			d.errorAt(line, col, "`group` reads `$inputs.%s` but the workflow has no typed inputs; give its inputs a `type`", r.input)
		case !hasInput(inputs, r.input):
			d.errorAt(line, col, "`group` reads `$inputs.%s` but there is no input `%s`", r.input, r.input)
		}
	})
	if wf, ok := fs["when_busy"]; ok {
		s, _ := d.oneOf(wf, []string{string(WhenBusyQueue), string(WhenBusyRefuse)})
		if s != "" {
			c.WhenBusy = WhenBusy(s)
		}
	}
	return c
}

func hasInput(inputs []Input, name string) bool {
	for _, in := range inputs {
		if in.Name == name {
			return true
		}
	}
	return false
}

// GroupFor is the group a run with these inputs joins: the group with its ${inputs.name} filled
// in, spaces at either end trimmed. "" when w has no concurrency group.
func (w *Workflow) GroupFor(inputs map[string]string) (string, error) {
	if w.Concurrency == nil {
		return "", nil
	}
	g := strings.TrimSpace(Expand(w.Concurrency.Group, Vars{Inputs: inputs}))
	if g == "" || len(g) > MaxGroupName || !utf8.ValidString(g) {
		return "", fmt.Errorf("%w: the concurrency group of %s is %q with these inputs; it must be 1 to %d bytes", ErrBadInput, w.Name, clip(g), MaxGroupName)
	}
	return g, nil
}
