package execution

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"threadflow/db"
	"threadflow/workflow"
)

// Executor drives one claimed run through its frozen workflow until it stops: completed, failed,
// paused at a gate, or interrupted (lease lost, shutdown). Every fact it learns is written to
// run_events under the run's lease before it acts on it, so any worker can continue where it stopped.
type Executor struct {
	Store     Store
	Providers Providers
	Notify    Notifier
	// Owing is what a transition the executor makes owes its run's conversation (Reporter.Owing);
	// nil owes nothing.
	Owing       func(Notice) db.Owing
	Log         *zap.Logger
	MaxParallel int                                              // nodes of one run at once; <= 0 means 4
	Sleep       func(ctx context.Context, d time.Duration) error // retry backoff; injected by tests
	Now         func() time.Time
	Observe     Observer
	Dirs        Dirs      // creates a run's working directory when it first executes
	Strays      *Strays   // stops what crashed attempts left running; nil scans afresh each time
	Disk        DiskGuard // a node attempt that fails while the disk is this full is blamed on the disk
	// LookPath finds the programs script nodes run with (bun, node, python3, uv); nil is
	// exec.LookPath on the bot's PATH.
	LookPath func(file string) (string, error)
	// GateTimersChanged is called after a gate with a timeout or reminder was asked, so the gate
	// timers look again at once; optional.
	GateTimersChanged func()
	// Workflows finds the workflow a `workflow:` node's child run runs, in the current catalog;
	// nil refuses child runs.
	Workflows func(name string) (*workflow.Workflow, error)
	// WakeWorkers is called after a child run was created or resumed, so a worker claims it at once.
	WakeWorkers func()
	// Nested is what a new child run owes, written with it: its line in its parent's thread
	// (Reporter.Nested); nil owes nothing.
	Nested    func(child db.Run) []db.Owed
	ChildPoll time.Duration // how often a waiting parent reads its child; <= 0 means 1s
	// DailyBudgetNanos is AGENT_DAILY_BUDGET_USD in nanodollars: what the agent turns of every run
	// may spend per UTC day, summed in the database; 0: no limit.
	DailyBudgetNanos int64
}

// Execute runs the workflow of a run this worker holds the lease of. It returns nil when the run
// reached a stop it recorded (completed, failed, paused), and an error when it was interrupted:
// the lease was lost, ctx ended, or the database failed. Interrupted runs stay running until their
// lease expires or the worker hands them back.
func (x *Executor) Execute(ctx context.Context, run db.Run) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	e := &execution{x: x, run: run, lease: run.Lease(), cancel: cancel}
	defer e.stopRecorder()
	wf, err := workflow.Parse("run "+run.ID, run.WorkflowSource)
	if err != nil {
		return e.fail(ctx, db.RunError{Class: db.ClassPermanent, Message: "the workflow frozen into this run no longer parses: " + err.Error()})
	}
	events, err := x.Store.Events(ctx, run.ID)
	if err != nil {
		return fmt.Errorf("read events of run %s: %w", run.ID, err)
	}
	h := Fold(events)
	e.wf, e.graph, e.hist, e.resumed, e.budgetsChanged = wf, wf.Graph(), h.nodes, h.Resumed, h.Budgets
	e.resumedBy = lastResumer(events)
	e.outputs = newOutputFiles(outputsDir(run), len(wf.Nodes))
	defer e.outputs.close()
	e.stopStrays()
	for _, n := range wf.Nodes {
		if e.hist[n.ID] == nil {
			e.hist[n.ID] = &nodeHistory{state: workflow.StatePending}
		}
	}
	e.alwaysRunAgain()
	if cancelled, err := e.cancelPending(ctx); cancelled {
		return err
	}
	if n, err := e.missingRuntime(); err != nil {
		return e.stopFailed(ctx, n.ID, 0, err)
	}
	if lost, err := e.ensureWorkspace(ctx, events); err != nil || lost != nil {
		return e.workspaceStopped(ctx, lost, err)
	}
	if err := e.writePayload(ctx); err != nil {
		return err
	}
	return e.schedule(ctx)
}

// stopStrays kills what an earlier worker's nodes left running on this host (see Strays) before
// any node of the run starts again. Only a node that started and never finished can have left
// processes, so a run without one costs no scan of /proc.
func (e *execution) stopStrays() {
	strays := e.x.Strays
	if strays == nil {
		strays = &Strays{}
	}
	for _, h := range e.hist {
		if h.state == workflow.StateRunning {
			if n := strays.Kill(e.run.ID, e.x.Log.With(zap.String("run_id", e.run.ID))); n > 0 {
				e.x.Log.Warn("orchestrator.strays_stopped", zap.String("run_id", e.run.ID), zap.Int("processes", n))
			}
			return
		}
	}
}

func (x *Executor) maxParallel() int {
	if x.MaxParallel <= 0 {
		return 4
	}
	return x.MaxParallel
}

func (x *Executor) observer() Observer { return ObserverOr(x.Observe) }

func (x *Executor) now() time.Time {
	if x.Now != nil {
		return x.Now()
	}
	return time.Now()
}

func (x *Executor) sleep(ctx context.Context, d time.Duration) error {
	if x.Sleep != nil {
		return x.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// execution is the state of one Execute call.
type execution struct {
	x          *Executor
	run        db.Run
	lease      db.Lease
	wf         *workflow.Workflow
	graph      *workflow.Graph         // wf indexed once, for the scheduler
	hist       map[string]*nodeHistory // touched only by the scheduling goroutine
	cancel     context.CancelCauseFunc
	progressed bool       // a node completed during this execution
	resumed    bool       // this execution follows an explicit /workflow resume
	resumedBy  db.Actor   // who asked for the latest resume: a child run is resumed in their name
	saving     sync.Mutex // one commit and push of the workspace at a time (Dirs.Save)
	outputs    *outputFiles
	recorder   recorder
	pace       progressPacer // touched only by the scheduling goroutine
	payload    string        // $TRIGGER_PAYLOAD_FILE, when a delivery started the run
	// budgetsChanged are the budgets a resume read again from the workflow file; nil: the frozen ones.
	budgetsChanged *db.BudgetChangedData
}

// nodeResult is what a node goroutine reports back to the scheduler.
type nodeResult struct {
	node     *workflow.Node
	output   NodeOutput // as recorded in node_completed: what later nodes see, before and after a resume
	err      error      // nil, a *nodeError, or an interruption
	pause    *db.Pause  // the node waits for a person
	attempt  int
	started  time.Time
	finished time.Time
	duration time.Duration // as recorded in the node's final event (see NodeDuration)
	// complete, when set, is the node's node_completed for the scheduler to record together with
	// the node_started of the nodes it lets start (commitGroup, a completion).
	complete *db.NodeCompletedData
}

// artifactsDir is $ARTIFACTS_DIR: where the nodes of a run keep the files they produce.
func (e *execution) artifactsDir() string { return ArtifactsDir(e.run) }

// record appends an event under the lease, after the events asked for before it (recorder).
// Losing the lease stops the whole execution at once.
func (e *execution) record(ctx context.Context, node string, attempt int, p db.Payload) error {
	return <-e.recordLater(ctx, node, attempt, p)
}

// vars are the workflow variables visible to node n: arguments, ids, and the outputs of the
// completed nodes among its inputs (with the fields of those that are JSON objects) (workflow.Graph.Inputs: upstream of it, so what it sees does
// not depend on which unrelated nodes happened to finish first, before or after a resume).
func (e *execution) vars(n *workflow.Node) workflow.Vars {
	up := e.graph.Inputs(n)
	outputs, files, fields := make(map[string]string, len(up)), make(map[string]string, len(up)), map[string]map[string]string{}
	for id := range up {
		h := e.hist[id]
		if h == nil || h.state != workflow.StateCompleted {
			continue
		}
		outputs[id] = h.output.Text
		if h.output.File != "" {
			files[id] = h.output.File
		}
		if f := workflow.FieldsOf(h.output.Text); f != nil {
			fields[id] = f
		}
	}
	return workflow.Vars{
		Arguments:    e.run.UserMessage,
		Inputs:       e.run.Inputs,
		RunID:        e.run.ID,
		ArtifactsDir: e.artifactsDir(),
		PayloadFile:  e.payload,
		Outputs:      outputs,
		OutputFiles:  files,
		Fields:       fields,
	}
}

// lastResumer is who asked for the run's latest explicit resume.
func lastResumer(events []db.Event) db.Actor {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == db.EventResumeRequested {
			d := db.Decode[db.ResumeRequestedData](events[i])
			return db.Actor{ID: d.By, Via: d.Via}
		}
	}
	return db.Actor{}
}
