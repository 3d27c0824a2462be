package storetest

import (
	"errors"
	"testing"
	"time"

	"threadflow/db"
)

func workspaceTests() []test {
	return []test{
		{"WorkspaceRecordedUnderTheLease", testWorkspaceRecorded},
		{"RunStaysWithItsLiveHome", testRunStaysWithLiveHome},
		{"RemoteLetsAnyReplicaTakeOver", testRemoteTakeOver},
		{"ResumeFreshForgetsTheWorkspace", testResumeFresh},
		{"LiveHomes", testLiveHomes},
	}
}

// Two replicas on separate THREADFLOW_HOMEs (and a third on A's home).
var (
	homeA = db.Home{Token: "home-a-0123456789", Owner: "a-1", Host: "host-a"}
	homeB = db.Home{Token: "home-b-0123456789", Owner: "b-1", Host: "host-b"}
	atA   = db.Reach{Home: homeA.Token}
	atB   = db.Reach{Home: homeB.Token}
)

// workspaceAt claims a fresh run at reach, records its workspace in home (pushed to remote when
// set) and hands it back to the queue, as a worker killed after its first node leaves it once the
// rescuer re-queued it.
func (e *env) workspaceAt(t *testing.T, reach db.Reach, home db.Home, remote string) db.Run {
	t.Helper()
	created := e.create(t, nil)
	r := wantClaim(t, e, reach, created.ID, "a run without a workspace goes to anyone")
	w := db.Workspace{Home: home.Token, Host: home.Host, Path: "/" + home.Host + "/runs/" + r.ID + "/work", Remote: remote}
	if _, err := e.s.SetWorkspace(e.ctx, r.Lease(), w); err != nil {
		t.Fatalf("SetWorkspace: %v", err)
	}
	return must(t)(e.s.ReleaseRun(e.ctx, r.Lease()))
}

func (e *env) announce(t *testing.T, h db.Home) {
	t.Helper()
	if err := e.s.AnnounceHome(e.ctx, h, 2*leaseTTL); err != nil {
		t.Fatalf("AnnounceHome: %v", err)
	}
}

func testWorkspaceRecorded(t *testing.T, e *env) {
	r, l := e.runIn(t, fxRunning, nil)
	w := db.Workspace{Home: homeA.Token, Host: "host-a", Path: "/a/runs/" + r.ID + "/work", Branch: "threadflow/" + r.ID, Remote: "file:///srv/ws.git"}
	got, err := e.s.SetWorkspace(e.ctx, l, w)
	if err != nil {
		t.Fatal(err)
	}
	if got.WorkingPath != w.Path || got.WorkspaceHome != w.Home || got.WorkspaceRemote != w.Remote {
		t.Errorf("run after SetWorkspace: path %q home %q remote %q", got.WorkingPath, got.WorkspaceHome, got.WorkspaceRemote)
	}
	if back := e.get(t, r.ID); back.WorkspaceHome != w.Home || back.WorkingPath != w.Path {
		t.Errorf("stored run: path %q home %q", back.WorkingPath, back.WorkspaceHome)
	}
	ev := e.last(t, r.ID)
	if ev.Type != db.EventWorkspace || db.Decode[db.Workspace](ev) != w {
		t.Errorf("last event = %s %s, want workspace_created of %+v", ev.Type, ev.Data, w)
	}
	stale := db.Lease{RunID: r.ID, Owner: "w-old", Token: "not-the-token"}
	if _, err := e.s.SetWorkspace(e.ctx, stale, w); !errors.Is(err, db.ErrLeaseLost) {
		t.Errorf("SetWorkspace under a lost lease = %v, want ErrLeaseLost", err)
	}
}

// Without a remote, a run whose workspace is in A's home stays with A's home while a process
// announces it; B takes it over only once A is gone for good (its announcement expired).
func testRunStaysWithLiveHome(t *testing.T, e *env) {
	e.announce(t, homeA)
	e.announce(t, homeB)
	r := e.workspaceAt(t, atA, homeA, "")
	wantNoClaim(t, e, atB, "its workspace is in A's home and A is alive")
	e.clock.Advance(leaseTTL)
	e.announce(t, homeB) // B renews, A does not
	wantNoClaim(t, e, atB, "A's home is still within its announcement")
	wantClaim(t, e, db.Reach{Home: homeA.Token}, r.ID, "another process on A's home reaches it")
	must(t)(e.s.ReleaseRun(e.ctx, e.get(t, r.ID).Lease()))
	e.clock.Advance(leaseTTL + time.Second)
	wantClaim(t, e, atB, r.ID, "A is gone for good")
}

// With the workspace pushed to a remote, a replica with the same remote takes the run at once;
// one with another remote (or none) does not while A lives.
func testRemoteTakeOver(t *testing.T, e *env) {
	const remote = "file:///srv/ws.git"
	e.announce(t, homeA)
	r := e.workspaceAt(t, atA, homeA, remote)
	wantNoClaim(t, e, db.Reach{Home: homeB.Token, Remote: "file:///srv/other.git"}, "B pushes elsewhere")
	wantClaim(t, e, db.Reach{Home: homeB.Token, Remote: remote}, r.ID, "B recreates it from the remote")
}

// ResumeFresh takes a recovery-paused run back to the queue with its workspace forgotten, so any
// replica claims it; the resume event says it was fresh.
func testResumeFresh(t *testing.T, e *env) {
	e.announce(t, homeA)
	r := e.workspaceAt(t, atA, homeA, "")
	e.clock.Advance(3 * leaseTTL) // A is gone
	claimed := wantClaim(t, e, atB, r.ID, "A is gone")
	paused := db.Pause{Kind: db.PauseRecovery, Error: "the workspace is lost", WorkspaceLost: true}
	got := must(t)(e.s.PauseRun(e.ctx, claimed.Lease(), paused))
	if got.Meta.Pause == nil || !got.Meta.Pause.WorkspaceLost {
		t.Fatalf("pause after a lost workspace = %+v", got.Meta.Pause)
	}
	e.announce(t, homeA) // A's home is back: the forgotten workspace must not hold the run there
	resumed, err := e.s.ResumeFresh(e.ctx, r.ID, db.Actor{ID: "slack:U1"})
	if err != nil {
		t.Fatal(err)
	}
	if resumed.Status != db.StatusQueued || resumed.WorkspaceHome != "" || resumed.WorkspaceRemote != "" {
		t.Errorf("after ResumeFresh: status %s, home %q, remote %q", resumed.Status, resumed.WorkspaceHome, resumed.WorkspaceRemote)
	}
	if d := db.Decode[db.ResumeRequestedData](e.last(t, r.ID)); !d.FreshWorkspace || d.From != db.StatusPaused {
		t.Errorf("resume event = %+v, want fresh_workspace from paused", d)
	}
	wantClaim(t, e, atB, r.ID, "a run without a workspace goes to anyone")
}

func testLiveHomes(t *testing.T, e *env) {
	e.announce(t, homeA)
	e.announce(t, homeB)
	e.clock.Advance(leaseTTL)
	e.announce(t, homeB)
	e.clock.Advance(leaseTTL + time.Second)
	live, err := e.s.LiveHomes(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(live) != 1 || live[0].Token != homeB.Token || live[0].Host != "host-b" || live[0].Owner != "b-1" {
		t.Errorf("LiveHomes = %+v, want only B's", live)
	}
}
