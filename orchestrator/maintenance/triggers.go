package maintenance

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.uber.org/zap"

	"threadflow/commands"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/execution"
	"threadflow/orchestrator/newrun"
	"threadflow/orchestrator/reporting"
	"threadflow/platform"
	"threadflow/workflow"
)

// TriggerStore is what firing triggers needs from a run store.
type TriggerStore interface {
	FireTrigger(ctx context.Context, f db.Fire) (db.FireResult, error)
	StartWaitingFire(ctx context.Context, trigger string, run db.NewRun) (db.FireResult, bool, error)
	TriggerStates(ctx context.Context) (map[string]db.TriggerState, error)
	NoteTriggers(ctx context.Context, triggers []string) error
}

// Catalogs gives the current workflow catalog (re-read as files change, so triggers follow their
// workflows' edits at the next look).
type Catalogs interface {
	Catalog() *workflow.Catalog
}

// TriggerObserver counts fires by outcome and refused deliveries by reason (package metrics).
type TriggerObserver interface {
	TriggerFired(trigger, kind string, outcome db.FireOutcome, reason string)
	TriggerRefused(trigger, reason string)
}

type noTriggerObserver struct{}

func (noTriggerObserver) TriggerFired(string, string, db.FireOutcome, string) {}
func (noTriggerObserver) TriggerRefused(string, string)                       {}

// Triggers is the one way a trigger (a schedule, a webhook, a GitHub event) starts a run: the fire
// and its run are written together by the store (db.Machine.FireTrigger), the run is created in
// the conversation the trigger posts to, owing its announcement exactly as a typed command's run
// does, and is recorded as requested by "trigger:<workflow>/<name>". access.run does not apply
// (the workflow's author wrote the trigger; a signature authenticates a delivery); access.channels
// does, checked when the workflow is loaded. A run of a workflow with `concurrency` joins its group
// in the fire's transaction exactly as a typed command's run does: it holds the group, waits in
// line (its thread says its place), or, with when_busy refuse, the fire is recorded as refused
// naming the holder (db.FireRefused). overlap is decided first, over the trigger's own earlier runs.
type Triggers struct {
	Store    TriggerStore
	Reporter *reporting.Reporter
	Dirs     execution.Dirs
	Limits   commands.Limits // MAX_ARGS_BYTES applies to a trigger's arguments as to a typed command's
	Wake     func()          // tells local workers and the reporter there is work
	Log      *zap.Logger
	Observe  TriggerObserver
}

// Delivery is one reason to fire: a scheduled time, or a webhook's delivery.
type Delivery struct {
	Key         string    // db.ScheduleKey or db.DeliveryKey
	ScheduledAt time.Time // schedules
	Event       string    // deliveries: "deploy", "issues.labeled"
	Payload     []byte    // deliveries: the body as received
	Decoded     any       // deliveries: the body decoded as JSON (nil when it is not JSON)
	Skip        string    // record the fire as skipped for this reason
}

// ArgsError is a delivery whose values the trigger's args cannot take (an object where text is
// wanted, arguments over MAX_ARGS_BYTES): the sender's mistake, refused before anything is written.
type ArgsError struct{ Msg string }

func (e *ArgsError) Error() string { return e.Msg }

// Fire fires tr of wf for d and returns what the store recorded.
func (t *Triggers) Fire(ctx context.Context, wf *workflow.Workflow, tr *workflow.Trigger, d Delivery) (db.FireResult, error) {
	id := tr.ID(wf.Name)
	text, named, err := tr.Args.Fill(d.Decoded, d.Event)
	var argErr *workflow.ArgError
	if errors.As(err, &argErr) {
		return db.FireResult{}, &ArgsError{Msg: argErr.Msg}
	}
	if err != nil {
		return db.FireResult{}, err
	}
	inputs, err := firedInputs(wf, text, named)
	if err != nil {
		return db.FireResult{}, &ArgsError{Msg: err.Error()}
	}
	run, err := t.newRun(wf, tr, text, inputs)
	var limit *commands.LimitError
	if errors.As(err, &limit) || errors.Is(err, workflow.ErrBadInput) {
		return db.FireResult{}, &ArgsError{Msg: err.Error()}
	}
	if err != nil {
		return db.FireResult{}, err
	}
	overlap := db.OverlapAllow
	if tr.Kind == workflow.TriggerSchedule {
		overlap = db.OverlapRule(tr.Overlap)
	}
	res, err := t.Store.FireTrigger(ctx, db.Fire{Trigger: id, Key: d.Key, Kind: string(tr.Kind), Event: d.Event, ScheduledAt: d.ScheduledAt,
		Overlap: overlap, Payload: d.Payload, Skip: d.Skip, Run: run})
	if err != nil {
		return db.FireResult{}, err
	}
	t.recorded(res)
	return res, nil
}

// startWaiting starts the oldest waiting fire of tr once its earlier run ended.
func (t *Triggers) startWaiting(ctx context.Context, wf *workflow.Workflow, tr *workflow.Trigger) error {
	text, named, err := tr.Args.Fill(nil, "")
	if err != nil {
		return err
	}
	inputs, err := firedInputs(wf, text, named)
	if err != nil {
		return err
	}
	run, err := t.newRun(wf, tr, text, inputs)
	if err != nil {
		return err
	}
	res, ok, err := t.Store.StartWaitingFire(ctx, tr.ID(wf.Name), run)
	if err == nil && ok {
		t.recorded(res)
	}
	return err
}

// recorded logs and counts what this process recorded, and wakes the workers for a new run.
func (t *Triggers) recorded(res db.FireResult) {
	if !res.Created {
		return
	}
	f := res.Fire
	t.observer().TriggerFired(f.Trigger, f.Kind, f.Outcome, f.Reason)
	fields := []zap.Field{zap.String("trigger", f.Trigger), zap.String("key", f.Key),
		zap.String("outcome", string(f.Outcome)), zap.String("reason", f.Reason), zap.String("run_id", f.RunID)}
	switch {
	case f.Outcome == db.FireRefused:
		fields = append(fields, zap.String("group", f.Group), zap.String("holder", f.Holder))
	case res.Place.Group != "":
		fields = append(fields, zap.String("group", res.Place.Group), zap.String("holder", res.Place.Holder), zap.Int("place", res.Place.Place))
	}
	t.Log.Info("orchestrator.trigger_fired", fields...)
	if res.Run.ID != "" && t.Wake != nil {
		t.Wake()
	}
}

func (t *Triggers) observer() TriggerObserver {
	if t.Observe == nil {
		return noTriggerObserver{}
	}
	return t.Observe
}

// newRun is the run a fire of tr creates, made by the rule every run is made by (newrun.Maker):
// in the conversation tr posts to, requested by the trigger, owing its announcement there, in the
// concurrency group its inputs name.
func (t *Triggers) newRun(wf *workflow.Workflow, tr *workflow.Trigger, args string, inputs map[string]string) (db.NewRun, error) {
	at := PostAddress(tr.PostTo)
	maker := newrun.Maker{Limits: t.Limits, Dirs: t.Dirs, Reporter: t.Reporter}
	return maker.NewRun(newrun.Request{At: at, By: conversation.Person{ID: tr.Requester(wf.Name)}, Workflow: wf, Args: args, Inputs: inputs,
		Parents: []db.Conversation{{ID: at.ConversationID(), Platform: at.Platform, ChannelID: at.ChannelID}}})
}

// PostAddress is the conversation a trigger's post_to names: a Slack or Discord channel, or the
// web chat's shared channel of runs.
func PostAddress(postTo string) conversation.Address {
	if postTo == platform.Web {
		return conversation.Address{Platform: platform.Web, ChannelID: platform.WebRuns}
	}
	p, ch, _ := strings.Cut(postTo, ":")
	return conversation.Address{Platform: p, ChannelID: ch}
}

// firedInputs are the typed inputs of a fired run, checked by the rules every start shares: the
// named args by name, or the text args as a typed command's words. A workflow without typed inputs
// has none, and its runs read the text as $ARGUMENTS.
func firedInputs(wf *workflow.Workflow, text string, named map[string]string) (map[string]string, error) {
	if !wf.Typed() {
		return nil, nil
	}
	if named != nil {
		return wf.CheckInputs(named)
	}
	return wf.RunInputs(strings.Fields(text))
}
