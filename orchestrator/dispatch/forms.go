package dispatch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.uber.org/zap"

	"threadflow/commands"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/workflow"
)

// Forms (conversation.Forms): a run command that lacks a workflow's required typed inputs opens a
// form where the platform can show one, and the form's submission goes through the same checks as
// a typed command: newrun.Inputs' rules (CheckInputs), access, the concurrency group, StartRun.

var _ conversation.Forms = (*Dispatcher)(nil)

// FormFor implements conversation.Forms.
func (b *Dispatcher) FormFor(ctx context.Context, m conversation.Message) *conversation.Form {
	text := strings.TrimSpace(m.Text)
	if !commands.IsCommand(text) || !b.Auth.Permits(m.UserID) || b.Limits.Check(m.Text) != nil {
		return nil
	}
	c, err := commands.Parse(text)
	if err != nil || c.Kind != commands.KindRun {
		return nil
	}
	wf, ok := b.Catalogs.Catalog().Get(c.Workflow)
	if !ok || !wf.Typed() {
		return nil
	}
	_, err = wf.RunInputs(c.Args)
	var bad *workflow.InputError
	if !errors.As(err, &bad) || !bad.Missing {
		return nil // complete, or wrong in a way the text answer explains
	}
	f, err := b.formOf(ctx, m, wf)
	if err != nil {
		return nil // the command's own answer says why
	}
	f.Force = c.Force
	for i := range f.Fields {
		f.Fields[i].Value = givenValue(wf, c.Args, f.Fields[i].Name)
	}
	return f
}

// givenValue is the value the command gave name, "" when none.
func givenValue(wf *workflow.Workflow, words []string, name string) string {
	for _, w := range words {
		if k, v, ok := strings.Cut(w, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// Workflows implements conversation.Forms.
func (b *Dispatcher) Workflows(ctx context.Context, m conversation.Message) []string {
	var out []string
	for _, wf := range b.Catalogs.Catalog().List() {
		if wf.Typed() && b.CheckAccess(ctx, wf, m.Address, m.Sender()) == nil {
			out = append(out, wf.Name)
		}
	}
	return out
}

// Form implements conversation.Forms.
func (b *Dispatcher) Form(ctx context.Context, m conversation.Message, name string) (*conversation.Form, error) {
	wf, ok := b.Catalogs.Catalog().Get(name)
	if !ok {
		return nil, fmt.Errorf("there is no workflow named %q", name)
	}
	if !wf.Typed() {
		return nil, fmt.Errorf("workflow %s has no typed inputs; start it with /workflow run %s ARGS", wf.Name, wf.Name)
	}
	return b.formOf(ctx, m, wf)
}

func (b *Dispatcher) formOf(ctx context.Context, m conversation.Message, wf *workflow.Workflow) (*conversation.Form, error) {
	if err := b.CheckAccess(ctx, wf, m.Address, m.Sender()); err != nil {
		return nil, err
	}
	f := &conversation.Form{Workflow: wf.Name, Title: "Run " + wf.Name}
	for _, in := range wf.Inputs {
		fd := conversation.Field{Name: in.Name, Label: in.Name, Hint: in.Accepts(), Kind: conversation.FieldText, Required: in.Required && !in.HasDefault, Default: in.Default}
		if in.Description != "" {
			fd.Hint = in.Description + " (" + in.Accepts() + ")"
		}
		switch in.Kind() {
		case workflow.TypeChoice:
			fd.Kind, fd.Choices = conversation.FieldChoice, in.Choices
		case workflow.TypeBoolean:
			fd.Kind = conversation.FieldBoolean
		}
		f.Fields = append(f.Fields, fd)
	}
	return f, nil
}

// Submit implements conversation.Forms.
func (b *Dispatcher) Submit(ctx context.Context, m conversation.Message, s conversation.Submission) (string, map[string]string) {
	wf, ok := b.Catalogs.Catalog().Get(s.Workflow)
	if !ok || !wf.Typed() {
		return "", map[string]string{"": fmt.Sprintf("workflow %q cannot be started from a form", s.Workflow)}
	}
	given := map[string]string{}
	for k, v := range s.Values {
		if v = strings.TrimSpace(v); v != "" {
			given[k] = v
		}
	}
	inputs, err := wf.CheckInputs(given)
	var bad *workflow.InputError
	if errors.As(err, &bad) {
		out := map[string]string{}
		for _, p := range bad.Problems {
			out[p.Input] = p.Msg
		}
		return "", out
	}
	run, err := b.StartRun(ctx, m.Address, m.Sender(), wf, pairsText(inputs), inputs)
	if err == nil {
		return run.ID, nil
	}
	var (
		busy    *db.GroupBusyError
		denied  *AccessError
		refused *commands.LimitError
	)
	switch {
	case errors.As(err, &busy):
		b.groupBusy(ctx, m, wf, busy)
	case errors.As(err, &denied):
		b.accessRefused(ctx, m, wf, err)
		return "", map[string]string{"": denied.Msg}
	case errors.As(err, &refused):
		return "", map[string]string{"": refused.Msg}
	default:
		b.Log.Error("orchestrator.form_run_failed", zap.String("workflow", wf.Name), zap.Error(err))
		return "", map[string]string{"": "Something went wrong while starting the run; nothing was started. Try again."}
	}
	return "", map[string]string{"": fmt.Sprintf("Nothing was started: run %s holds concurrency group %s", busy.Holder, busy.Group)}
}

// pairsText is a form's values as the run's arguments: name=value words in name order.
func pairsText(in map[string]string) string {
	names := slices.Sorted(maps.Keys(in))
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + in[n]
	}
	return strings.Join(parts, " ")
}
