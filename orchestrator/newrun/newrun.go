// Package newrun is the one rule for making a run from a request, whichever way it came: a typed
// command, a form, the CLI or a trigger's fire. The dispatcher and the trigger loop both use it, so
// it sits below them both (README, Layout).
package newrun

import (
	"threadflow/commands"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/execution"
	"threadflow/orchestrator/reporting"
	"threadflow/workflow"
)

// Request is one request to start a run of Workflow, whichever way it came: a typed command, a
// form, the CLI, a trigger's fire.
type Request struct {
	ID       string // "" for a fresh id
	At       conversation.Address
	By       conversation.Person
	Workflow *workflow.Workflow
	Args     string            // the run's text ($ARGUMENTS)
	Inputs   map[string]string // typed inputs by name (checked again here)
	// Parents are the conversations recorded with the run (if new), parents first: where it was
	// asked for, unless the caller knows they are recorded already.
	Parents []db.Conversation
}

// Maker is the one rule for making a run from a request, shared by every way a run starts
// (Dispatcher.startRun and maintenance.Triggers): its arguments within MAX_ARGS_BYTES, its typed
// inputs checked and the concurrency group they put it in (with the workflow's when_busy), a
// fresh working directory, the workflow frozen into it, and the announcement it owes in the
// conversation it was asked for in. Who may start it is the caller's to check (a trigger's runs
// are not checked against access.run); the store decides, as it creates the run, whether its group
// lets it hold, wait or be refused.
type Maker struct {
	Limits   commands.Limits
	Dirs     execution.Dirs
	Reporter *reporting.Reporter
}

// NewRun makes the run req asks for; *commands.LimitError and workflow.ErrBadInput (a
// *workflow.InputError, or a group its inputs make too long) refuse it before anything is written.
func (k Maker) NewRun(req Request) (db.NewRun, error) {
	wf := req.Workflow
	if err := k.Limits.CheckArgs(req.Args); err != nil {
		return db.NewRun{}, err
	}
	inputs, group, err := Inputs(wf, req.Inputs)
	if err != nil {
		return db.NewRun{}, err
	}
	id := req.ID
	if id == "" {
		id = db.NewRunID()
	}
	by := req.By
	by.Name = conversation.DisplayName(by.Name)
	at := req.At.ConversationID()
	n := db.NewRun{ID: id, Workflow: wf.Name, ConversationID: at, ParentConversationID: at,
		UserID: by.ID, UserName: by.Name, UserVia: by.Via, UserMessage: req.Args, WorkingPath: k.Dirs.WorkPath(id), WorkflowSource: wf.Source,
		Inputs: inputs, Group: group, Parents: req.Parents, Owe: k.Reporter.Announce(db.Run{ID: id, Workflow: wf.Name}, by)}
	if group != "" {
		n.WhenBusy = string(wf.Concurrency.WhenBusy)
	}
	return n, nil
}

// Inputs checks a run's typed inputs (as given by name: from RunInputs' words, a form, a CLI
// flag or a trigger) against wf once more, on the path every start shares, and returns them with
// the concurrency group they put the run in. A workflow without typed inputs takes none.
func Inputs(wf *workflow.Workflow, given map[string]string) (map[string]string, string, error) {
	var inputs map[string]string
	if wf.Typed() {
		var err error
		if inputs, err = wf.CheckInputs(given); err != nil {
			return nil, "", err
		}
	} else if len(given) > 0 {
		return nil, "", &workflow.InputError{Workflow: wf.Name, Problems: []workflow.InputProblem{{Msg: wf.Name + " takes no named inputs; pass its arguments as text"}}}
	}
	group, err := wf.GroupFor(inputs)
	return inputs, group, err
}
