package execution

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"go.uber.org/zap"

	"threadflow/conversation"
	"threadflow/db"
)

// ensureWorkspace gives the execution a workspace this process reaches (see workspace.go), and
// records where it is. lost is set, with no error, when the run's files are nowhere this process
// can get them: the run made progress in a workspace of a home no live process sees (the claim let
// this process take it for that reason), or its directory is gone, and no remote holds it. A
// *RemoteError says WORKSPACE_REMOTE could not be read, which decides nothing about the workspace.
func (e *execution) ensureWorkspace(ctx context.Context, events []db.Event) (lost *lostWorkspace, err error) {
	if e.wf.LiveCheckout {
		return nil, e.liveCheckout(ctx)
	}
	d, r := e.x.Dirs, e.run
	since := sinceFresh(events)
	started := len(since.started) > 0
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
	case !started && keptOn(events, d.RemoteShown()):
		w, err = d.Remake(ctx, r.ID) // the run's branch may be on the remote already
	case !started:
		w, err = d.Make(ctx, r.ID)
	case r.WorkspaceRemote != "" && r.WorkspaceRemote == d.RemoteShown():
		return e.fromRemote(ctx, events, since)
	default:
		last := lastWorkspace(events)
		if last.Path == "" {
			last.Path = r.WorkingPath
		}
		return &lostWorkspace{where: last}, nil
	}
	if err != nil {
		return nil, err
	}
	return nil, e.setWorkspace(ctx, w)
}

// fromRemote gives back the workspace of a run that made progress elsewhere and is kept on this
// process's WORKSPACE_REMOTE. The remote's answer and what the run recorded decide together:
//
//   - the run's branch is on the remote: the workspace is recreated from it;
//   - it is not, and no node completed since the workspace was made: the workspace never reached
//     the remote (a node's completion is recorded only after its save was pushed, saveWorkspace),
//     so the run starts again in a fresh one, and its thread is told;
//   - it is not, although a node completed: the branch was deleted, and the workspace is lost.
//
// A remote that does not answer decides nothing: its *RemoteError pauses the run (pauseUnreachable)
// rather than starting the run over from a guess.
func (e *execution) fromRemote(ctx context.Context, events []db.Event, since freshSpan) (*lostWorkspace, error) {
	d, id := e.x.Dirs, e.run.ID
	has, err := d.RemoteHasBranch(ctx, id)
	switch {
	case err != nil:
		return nil, err
	case has:
		w, err := d.Recreate(ctx, id)
		if err != nil {
			return nil, err
		}
		e.x.Log.Info("orchestrator.workspace_recreated", zap.String("run_id", id), zap.String("remote", w.Remote))
		return nil, e.setWorkspace(ctx, w)
	case since.saved != "":
		return &lostWorkspace{where: lastWorkspace(events), saved: since.saved}, nil
	}
	w, err := d.Make(ctx, id)
	if err != nil {
		return nil, err
	}
	w.Replaced = true
	if err := e.setWorkspace(ctx, w); err != nil {
		return nil, err
	}
	// The nodes that started run again; a gate already answered is not asked again.
	again := slices.DeleteFunc(slices.Clone(since.started), func(n string) bool { return e.hist[n] != nil && e.hist[n].justAnswered })
	e.x.Log.Info("orchestrator.workspace_replaced", zap.String("run_id", id), zap.String("remote", w.Remote), zap.Strings("nodes", again))
	e.x.Notify.Notify(ctx, Notice{Kind: NoticeNote, Run: e.run, Text: afreshText(id, lastWorkspace(events).Host, again)})
	return nil, nil
}

// afreshText tells the thread that the run starts again in a fresh workspace, and which nodes run
// again.
func afreshText(runID, host string, again []string) conversation.Text {
	t := conversation.T(conversation.P("↻ The workspace of run "), conversation.C(runID))
	if host != "" {
		t = t.Append(conversation.P(" on host "), conversation.C(host))
	}
	t = t.Append(conversation.P(" never reached WORKSPACE_REMOTE (no node had completed in it), so the run starts again from its first node in a fresh workspace"))
	if len(again) == 0 {
		return t.Append(conversation.P("."))
	}
	t = t.Append(conversation.P(": "))
	for i, n := range again {
		switch {
		case i == 0:
		case i == len(again)-1:
			t = t.Append(conversation.P(" and "))
		default:
			t = t.Append(conversation.P(", "))
		}
		t = t.Append(conversation.C(n))
	}
	if len(again) == 1 {
		return t.Append(conversation.P(" runs again."))
	}
	return t.Append(conversation.P(" run again."))
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

// workspaceStopped stops a run ensureWorkspace gave no workspace: lost, a remote that did not
// answer, or this host's own failure to make it.
func (e *execution) workspaceStopped(ctx context.Context, lost *lostWorkspace, err error) error {
	var re *RemoteError
	switch {
	case lost != nil:
		return e.pauseLost(ctx, *lost)
	case errors.Is(err, db.ErrLeaseLost) || ctx.Err() != nil:
		return e.interrupted(err)
	case errors.As(err, &re):
		return e.pauseUnreachable(ctx, re)
	}
	var ne *nodeError
	if errors.As(err, &ne) {
		return e.stopFailed(ctx, "", 0, ne)
	}
	return e.stopFailed(ctx, "", 0, &nodeError{class: db.ClassInfra, msg: err.Error(), hint: "make THREADFLOW_HOME (or REPO_PATH) writable on this host"})
}

// liveCheckout gives a run whose workflow works in the live checkout (Archon's `worktree:
// {enabled: false}`) REPO_PATH itself instead of a workspace of its own: the run's work directory
// is a symbolic link to it, so the run's outputs and artifacts stay in the run's own directory
// beside it. The checkout is not the run's: nothing of it is pushed to WORKSPACE_REMOTE.
func (e *execution) liveCheckout(ctx context.Context) error {
	d := e.x.Dirs
	if d.RepoPath == "" {
		return &nodeError{class: db.ClassInfra, msg: fmt.Sprintf("workflow %s works in the live checkout (worktree.enabled: false), and REPO_PATH is not set", e.run.Workflow),
			hint: "set REPO_PATH to the repository's checkout, then resume the run"}
	}
	link := d.WorkPath(e.run.ID)
	if err := linkCheckout(link, d.RepoPath); err != nil {
		return &nodeError{class: db.ClassInfra, msg: fmt.Sprintf("cannot point run %s at the live checkout: %v", e.run.ID, err),
			hint: "make THREADFLOW_HOME writable and REPO_PATH an existing directory, then resume the run"}
	}
	if e.run.WorkingPath == link && e.run.WorkspaceHome == d.Token {
		return nil
	}
	return e.setWorkspace(ctx, db.Workspace{Home: d.Token, Host: d.Host, Path: link})
}

// linkCheckout makes link a symbolic link to the checkout repo. A link elsewhere is replaced
// (REPO_PATH may differ between hosts); a directory with files in it is not.
func linkCheckout(link, repo string) error {
	repo, err := filepath.Abs(repo)
	if err != nil {
		return err
	}
	if target, err := os.Readlink(link); err == nil && target == repo {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return err
	}
	if err := os.Remove(link); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return os.Symlink(repo, link)
}

// lostWorkspace is a workspace no replica can get back.
type lostWorkspace struct {
	where db.Workspace // the last one recorded
	saved string       // the last node whose save reached the run's branch, now gone from the remote; "" when none did
}

// text says why the workspace is lost.
func (l lostWorkspace) text(runID string) string {
	if l.saved != "" {
		return fmt.Sprintf("the workspace of run %s is lost: node %s's changes were pushed to branch %s on WORKSPACE_REMOTE %s, "+
			"and that branch is not there any more (deleted, or the remote was replaced)", runID, l.saved, l.where.Branch, l.where.Remote)
	}
	where := "its working directory " + l.where.Path
	if l.where.Host != "" {
		where += " on host " + l.where.Host
	}
	return fmt.Sprintf("the workspace of run %s is lost: %s is gone, no running replica sees the THREADFLOW_HOME that held it, "+
		"and it was not pushed to a WORKSPACE_REMOTE", runID, where)
}

// pauseLost stops a run whose workspace is lost. No plain resume can help; the pause says so and
// how to run it again from its first node.
func (e *execution) pauseLost(ctx context.Context, l lostWorkspace) error {
	e.x.Log.Warn("orchestrator.workspace_lost", zap.String("run_id", e.run.ID), zap.String("host", l.where.Host), zap.String("saved_node", l.saved))
	p := db.Pause{Kind: db.PauseRecovery, Error: l.text(e.run.ID), WorkspaceLost: true, Since: e.x.now(),
		ResumeHint: FreshHint(e.run.ID)}
	return e.pauseRecovery(ctx, p)
}

// pauseUnreachable stops a run whose WORKSPACE_REMOTE did not answer. Its workspace is not lost: a
// plain resume tries the remote again, and --fresh-workspace, which the pause allows, starts the
// run over instead. It pauses whatever the run was resumed from (a failed run too), so that choice
// is offered.
func (e *execution) pauseUnreachable(ctx context.Context, re *RemoteError) error {
	e.x.Log.Warn("orchestrator.workspace_unreachable", zap.String("run_id", e.run.ID), zap.String("remote", re.Remote), zap.Error(re))
	hint := fmt.Sprintf("make WORKSPACE_REMOTE %s reachable from this host, then /workflow resume %s", re.Remote, e.run.ID)
	p := db.Pause{Kind: db.PauseRecovery, Error: fmt.Sprintf("the workspace of run %s cannot be recreated: %v", e.run.ID, re),
		ResumeHint: hint, WorkspaceUnreachable: true, Since: e.x.now()}
	return e.pauseRecovery(ctx, p)
}

// pauseRecovery pauses the run for a person with p, owing the paused notice, and settles it.
func (e *execution) pauseRecovery(ctx context.Context, p db.Pause) error {
	n := Notice{Kind: NoticePaused, Nodes: e.nodeStatuses()}
	run, err := e.x.Store.PauseRun(ctx, e.lease, p, e.owing(n))
	if err != nil {
		return e.interrupted(err)
	}
	n.Run = run
	e.settled(ctx, n)
	return nil
}

// FreshHint is what a person can do about a lost workspace.
func FreshHint(runID string) string {
	return fmt.Sprintf("/workflow resume %s --fresh-workspace runs it again from its first node with the same arguments, "+
		"or /workflow abandon %s", runID, runID)
}

// saveWorkspace pushes the workspace after node completed (Dirs.Save), when the run's workspace is
// kept on a remote. A failed push fails the attempt: a completed node whose files no other host
// could recreate would break the contract. So a node_completed of such a run is the durable record
// that its save reached the remote, which fromRemote relies on.
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

// freshSpan is what the run did since it last got a fresh workspace: its first, one of a
// --fresh-workspace resume, or one that replaced a workspace which never reached the remote.
type freshSpan struct {
	started []string // the nodes that started, in order: the workspace holds what later nodes need
	saved   string   // the last node that completed (and so was pushed, saveWorkspace); "" for none
}

func sinceFresh(events []db.Event) freshSpan {
	var s freshSpan
	for _, ev := range events {
		switch {
		case ev.Type == db.EventNodeStarted && !slices.Contains(s.started, ev.NodeID):
			s.started = append(s.started, ev.NodeID)
		case ev.Type == db.EventNodeCompleted:
			s.saved = ev.NodeID
		case ev.Type == db.EventResumeRequested && db.Decode[db.ResumeRequestedData](ev).FreshWorkspace,
			ev.Type == db.EventWorkspace && db.Decode[db.Workspace](ev).Replaced:
			s = freshSpan{}
		}
	}
	return s
}

// keptOn reports whether an earlier workspace of the run was kept on remote (as shown).
func keptOn(events []db.Event, remote string) bool {
	if remote == "" {
		return false
	}
	for _, ev := range events {
		if ev.Type == db.EventWorkspace && db.Decode[db.Workspace](ev).Remote == remote {
			return true
		}
	}
	return false
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

// WorkingDirExists reports whether run's working directory is on this host's disk.
func WorkingDirExists(run db.Run) bool { return exists(run.WorkingPath) }

func exists(path string) bool {
	_, err := os.Stat(path)
	return path != "" && err == nil
}
