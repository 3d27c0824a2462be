package orchestrator

import (
	"context"
	"fmt"
	"os"

	"go.uber.org/zap"

	"threadflow/db"
)

// ensureWorkspace gives the execution a workspace this process reaches (see workspace.go), and
// records where it is. lost is set, with no error, when the run's files are nowhere this process
// can get them: the run made progress in a workspace of a home no live process sees (the claim let
// this process take it for that reason), or its directory is gone, and no remote holds it.
func (e *execution) ensureWorkspace(ctx context.Context, events []db.Event) (lost *db.Workspace, err error) {
	d, r := e.x.Dirs, e.run
	started := startedSinceFresh(events)
	ours := r.WorkspaceHome == d.Token || r.WorkspaceHome == "" // "": made by a version that did not record homes
	if ours && started && exists(r.WorkingPath) {
		if r.WorkspaceHome == "" {
			return nil, e.setWorkspace(ctx, db.Workspace{Home: d.Token, Host: d.Host, Path: r.WorkingPath})
		}
		return nil, nil
	}
	if r.WorkspaceHome == d.Token && !started && exists(r.WorkingPath) {
		return nil, nil // made by an earlier execution that stopped before its first node
	}
	var w db.Workspace
	switch {
	case !started:
		w, err = d.Make(ctx, r.ID)
	case r.WorkspaceRemote != "" && r.WorkspaceRemote == d.remoteShown():
		w, err = d.Recreate(ctx, r.ID)
	default:
		last := lastWorkspace(events)
		if last.Path == "" {
			last.Path = r.WorkingPath
		}
		return &last, nil
	}
	if err != nil {
		return nil, err
	}
	if w.Recreated {
		e.x.Log.Info("orchestrator.workspace_recreated", zap.String("run_id", r.ID), zap.String("remote", w.Remote))
	}
	return nil, e.setWorkspace(ctx, w)
}

// setWorkspace records w on the run, and works there from now on.
func (e *execution) setWorkspace(ctx context.Context, w db.Workspace) error {
	run, err := e.x.Store.SetWorkspace(ctx, e.lease, w)
	if err != nil {
		return err
	}
	e.run.WorkingPath, e.run.WorkspaceHome, e.run.WorkspaceRemote = run.WorkingPath, run.WorkspaceHome, run.WorkspaceRemote
	return nil
}

// pauseLost stops a run whose workspace is lost. No plain resume can help; the pause says so and
// how to run it again from its first node.
func (e *execution) pauseLost(ctx context.Context, w db.Workspace) error {
	e.x.Log.Warn("orchestrator.workspace_lost", zap.String("run_id", e.run.ID), zap.String("host", w.Host))
	p := db.Pause{Kind: db.PauseRecovery, Error: LostWorkspaceText(e.run.ID, w), WorkspaceLost: true, Since: e.x.now(),
		ResumeHint: FreshHint(e.run.ID)}
	run, err := e.x.Store.PauseRun(ctx, e.lease, p)
	if err != nil {
		return e.interrupted(err)
	}
	e.settled(ctx, Notice{Kind: NoticePaused, Run: run, Nodes: e.nodeStatuses()})
	return nil
}

// LostWorkspaceText says where a lost workspace was.
func LostWorkspaceText(runID string, w db.Workspace) string {
	where := "its working directory " + w.Path
	if w.Host != "" {
		where += " on host " + w.Host
	}
	return fmt.Sprintf("the workspace of run %s is lost: %s is gone, no running replica sees the THREADFLOW_HOME that held it, "+
		"and it was not pushed to a WORKSPACE_REMOTE", runID, where)
}

// FreshHint is what a person can do about a lost workspace.
func FreshHint(runID string) string {
	return fmt.Sprintf("/workflow resume %s --fresh-workspace runs it again from its first node with the same arguments, "+
		"or /workflow abandon %s", runID, runID)
}

// saveWorkspace pushes the workspace after node completed (Dirs.Save), when the run's workspace is
// kept on a remote. A failed push fails the attempt: a completed node whose files no other host
// could recreate would break the contract.
func (e *execution) saveWorkspace(ctx context.Context, node string, attempt int) error {
	if e.run.WorkspaceRemote == "" {
		return nil
	}
	e.saving.Lock()
	defer e.saving.Unlock()
	msg := fmt.Sprintf("threadflow: run %s, node %s (attempt %d) completed", e.run.ID, node, attempt)
	if err := e.x.Dirs.Save(ctx, e.run.ID, e.run.WorkingPath, msg); err != nil {
		return &nodeError{class: db.ClassInfra, msg: err.Error(), hint: "make WORKSPACE_REMOTE reachable and writable"}
	}
	return nil
}

// startedSinceFresh reports whether a node started since the run last got a fresh workspace: only
// then does the workspace hold anything a later node needs.
func startedSinceFresh(events []db.Event) bool {
	started := false
	for _, ev := range events {
		switch {
		case ev.Type == db.EventNodeStarted:
			started = true
		case ev.Type == db.EventResumeRequested && db.Decode[db.ResumeRequestedData](ev).FreshWorkspace:
			started = false
		}
	}
	return started
}

// lastWorkspace is the latest workspace recorded for the run; zero when none was.
func lastWorkspace(events []db.Event) db.Workspace {
	var w db.Workspace
	for _, ev := range events {
		if ev.Type == db.EventWorkspace {
			w = db.Decode[db.Workspace](ev)
		}
	}
	return w
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return path != "" && err == nil
}
