package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"threadflow/db"
)

func queryTests() []test {
	return []test{
		{"CreateRunRoundTrip", testCreateRoundTrip},
		{"CreateRunDuplicateID", testCreateDuplicate},
		{"CreateRunNeedsConversation", testCreateNeedsConversation},
		{"CreateRunsRefusesOnlyTheBadOne", testCreateRunsRefusesOnlyTheBadOne},
		{"ConcurrentCreateRunsKeepTheirOwnOutcome", testConcurrentCreateRuns},
		{"FindResumable", testFindResumable},
		{"ListRuns", testListRuns},
		{"ListRunsInConversation", testListRunsInConversation},
		{"CountRuns", testCountRuns},
		{"FindRunsByPrefix", testFindByPrefix},
		{"SetRunConversation", testSetRunConversation},
	}
}

func testCreateRoundTrip(t *testing.T, e *env) {
	r := e.create(t, nil)
	n := newRun(nil)
	if len(r.ID) != db.RunIDLength || !db.ValidRunIDPrefix(r.ID) {
		t.Fatalf("generated run id %q is not a valid run id", r.ID)
	}
	got := e.get(t, r.ID)
	now := e.clock.Now()
	if got.Workflow != n.Workflow || got.ConversationID != n.ConversationID || got.ParentConversationID != n.ParentConversationID ||
		got.UserID != n.UserID || got.UserName != n.UserName || got.UserMessage != n.UserMessage || got.WorkingPath != n.WorkingPath {
		t.Fatalf("run read back as %+v, created from %+v", got, n)
	}
	if !bytes.Equal(got.WorkflowSource, n.WorkflowSource) || got.WorkflowDigest != db.Digest(n.WorkflowSource) {
		t.Fatalf("frozen source %q digest %s, want %q %s", got.WorkflowSource, got.WorkflowDigest, n.WorkflowSource, db.Digest(n.WorkflowSource))
	}
	if got.Status != db.StatusQueued || !got.CreatedAt.Equal(now) || !got.QueuedAt.Equal(now) || got.Attempt != 0 || got.Recoveries != 0 {
		t.Fatalf("new run: %s created %v queued %v attempt %d recoveries %d", got.Status, got.CreatedAt, got.QueuedAt, got.Attempt, got.Recoveries)
	}
	if !got.StartedAt.IsZero() || !got.FinishedAt.IsZero() || !got.LeaseExpiresAt.IsZero() || got.LeaseToken != "" {
		t.Fatalf("new run has times or lease set: %+v", got)
	}
	if evs := e.events(t, r.ID); len(evs) != 1 || evs[0].Type != db.EventRunCreated {
		t.Fatalf("new run events %v, want [run_created]", types(evs))
	}
}

func testCreateDuplicate(t *testing.T, e *env) {
	e.create(t, func(n *db.NewRun) { n.ID = "abcdefghjk" })
	_, err := e.s.CreateRun(e.ctx, newRun(func(n *db.NewRun) { n.ID = "abcdefghjk" }))
	if !errors.Is(err, db.ErrDuplicate) {
		t.Fatalf("CreateRun with a taken id: %v, want ErrDuplicate", err)
	}
}

func testCreateNeedsConversation(t *testing.T, e *env) {
	_, err := e.s.CreateRun(e.ctx, newRun(func(n *db.NewRun) { n.ConversationID = "slack:nowhere" }))
	if !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("CreateRun in an unknown conversation: %v, want ErrNotFound", err)
	}
}

// A batch of creations commits together; a run refused inside it (unknown conversation, taken id,
// no workflow) gets the error it would get alone, and the runs around it are created with their
// run_created events.
func testCreateRunsRefusesOnlyTheBadOne(t *testing.T, e *env) {
	e.create(t, func(n *db.NewRun) { n.ID = "takenidxyz" })
	batch := []db.NewRun{
		newRun(func(n *db.NewRun) { n.ID = "firstrunab" }),
		newRun(func(n *db.NewRun) { n.ConversationID = "slack:nowhere" }),
		newRun(func(n *db.NewRun) { n.ID = "secondrunb" }),
		newRun(func(n *db.NewRun) { n.ID = "takenidxyz" }),
		newRun(func(n *db.NewRun) { n.Workflow = "" }),
		newRun(func(n *db.NewRun) { n.ID = "thirdrunab" }),
	}
	runs, errs := e.s.CreateRuns(e.ctx, batch)
	for _, i := range []int{0, 2, 5} {
		if errs[i] != nil || runs[i].ID != batch[i].ID || runs[i].Status != db.StatusQueued {
			t.Errorf("run %d: %+v, %v; want %s created", i, runs[i], errs[i], batch[i].ID)
			continue
		}
		if evs := e.events(t, runs[i].ID); len(evs) != 1 || evs[0].Type != db.EventRunCreated {
			t.Errorf("run %s events %v, want [run_created]", runs[i].ID, types(evs))
		}
	}
	if !errors.Is(errs[1], db.ErrNotFound) {
		t.Errorf("run in an unknown conversation: %v, want ErrNotFound", errs[1])
	}
	if !errors.Is(errs[3], db.ErrDuplicate) {
		t.Errorf("run with a taken id: %v, want ErrDuplicate", errs[3])
	}
	if errs[4] == nil || !strings.Contains(errs[4].Error(), "workflow name") {
		t.Errorf("run without a workflow: %v, want it refused", errs[4])
	}
}

// Creations arriving together are written together (Machine.CreateRun groups them): each one that
// is valid is created with its thread, its run_created event and its status message, whatever else
// its group held, and one in an unknown conversation fails alone with ErrNotFound.
func testConcurrentCreateRuns(t *testing.T, e *env) {
	e.conversations(t)
	const n = 48
	errs, runs := make([]error, n), make([]db.Run, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			thread := db.Conversation{ID: fmt.Sprintf("%s:T%d", channelConv, i), Platform: "slack", ChannelID: "C1",
				ThreadID: fmt.Sprintf("T%d", i), ParentID: channelConv}
			runs[i], errs[i] = e.s.CreateRun(e.ctx, newRun(func(r *db.NewRun) {
				r.ConversationID, r.Conversation = thread.ID, &thread
				r.Messages = []db.MessageRef{{Kind: "status", Platform: "slack", ChannelID: "C1", ThreadID: thread.ThreadID, MessageID: fmt.Sprint(i)}}
				if i%7 == 3 { // a thread under a channel nobody recorded
					thread.ParentID, thread.ChannelID = "slack:C404", "C404"
					thread.ID = "slack:C404:" + thread.ThreadID
					r.ConversationID = thread.ID
				}
			}))
		}()
	}
	wg.Wait()
	for i := range n {
		if i%7 == 3 {
			if !errors.Is(errs[i], db.ErrNotFound) {
				t.Errorf("creation %d under an unknown channel: %v, want ErrNotFound", i, errs[i])
			}
			continue
		}
		if errs[i] != nil {
			t.Errorf("creation %d: %v", i, errs[i])
			continue
		}
		if evs := e.events(t, runs[i].ID); len(evs) != 1 || evs[0].Type != db.EventRunCreated {
			t.Errorf("run %s events %v, want [run_created]", runs[i].ID, types(evs))
		}
		refs, err := e.s.MessageRefs(e.ctx, runs[i].ID)
		if err != nil || len(refs) != 1 || refs[0].MessageID != fmt.Sprint(i) {
			t.Errorf("run %s messages %+v, %v; want its status message %d", runs[i].ID, refs, err, i)
		}
		if got := e.get(t, runs[i].ID); got.ConversationID != fmt.Sprintf("%s:T%d", channelConv, i) {
			t.Errorf("run %s is in %s, want its own thread", got.ID, got.ConversationID)
		}
	}
}

func testFindResumable(t *testing.T, e *env) {
	if _, err := e.s.FindResumable(e.ctx, "build", channelConv); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("FindResumable on empty store: %v, want ErrNotFound", err)
	}
	older, _ := e.runIn(t, fxFailed, nil)
	e.clock.Advance(time.Second)
	want, _ := e.runIn(t, fxApproval, nil)
	e.clock.Advance(time.Second)
	// Newer, but none of these may be offered for resuming.
	e.runIn(t, fxCancelled, nil)
	e.runIn(t, fxCompleted, nil)
	e.runIn(t, fxFailed, func(n *db.NewRun) { n.Workflow = "deploy" })
	e.runIn(t, fxFailed, func(n *db.NewRun) { n.ConversationID, n.ParentConversationID = otherConv, otherConv })
	running, _ := e.runIn(t, fxRunning, nil)

	got, err := e.s.FindResumable(e.ctx, "build", channelConv)
	if err != nil || got.ID != want.ID {
		t.Fatalf("FindResumable = %s, %v; want the newest paused run %s (older failed %s)", got.ID, err, want.ID, older.ID)
	}
	e.retire(t, want.ID)
	e.retire(t, running.ID)
	if got, err := e.s.FindResumable(e.ctx, "build", channelConv); err != nil || got.ID != older.ID {
		t.Fatalf("FindResumable = %s, %v; want the failed run %s", got.ID, err, older.ID)
	}
}

func testListRuns(t *testing.T, e *env) {
	a, _ := e.runIn(t, fxFailed, nil)
	e.clock.Advance(time.Second)
	b, _ := e.runIn(t, fxQueued, func(n *db.NewRun) { n.Workflow = "deploy"; n.UserID = "slack:U7" })
	e.clock.Advance(time.Second)
	c, _ := e.runIn(t, fxQueued, func(n *db.NewRun) { n.ConversationID, n.ParentConversationID = otherConv, otherConv })
	tests := []struct {
		name string
		f    db.RunFilter
		want []string
	}{
		{"all newest first", db.RunFilter{}, []string{c.ID, b.ID, a.ID}},
		{"by status", db.RunFilter{Statuses: []db.Status{db.StatusQueued}}, []string{c.ID, b.ID}},
		{"by statuses", db.RunFilter{Statuses: []db.Status{db.StatusFailed, db.StatusCompleted}}, []string{a.ID}},
		{"by workflow", db.RunFilter{Workflow: "deploy"}, []string{b.ID}},
		{"by user", db.RunFilter{UserID: "slack:U7"}, []string{b.ID}},
		{"by conversation", db.RunFilter{ConversationID: otherConv}, []string{c.ID}},
		{"by parent", db.RunFilter{ParentConversationID: channelConv}, []string{b.ID, a.ID}},
		{"limit", db.RunFilter{Limit: 2}, []string{c.ID, b.ID}},
		{"no match", db.RunFilter{Workflow: "nope"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runs, err := e.s.ListRuns(e.ctx, tc.f)
			if err != nil {
				t.Fatalf("ListRuns: %v", err)
			}
			if got := ids(runs); !equalIDs(got, tc.want) {
				t.Fatalf("ListRuns(%+v) = %v, want %v", tc.f, got, tc.want)
			}
		})
	}
}

func testFindByPrefix(t *testing.T, e *env) {
	for _, id := range []string{"aaaaaa0001", "aaaaaa0002", "aaaaab0001", "bbbbbb0001"} {
		e.create(t, func(n *db.NewRun) { n.ID = id })
	}
	tests := []struct {
		prefix string
		limit  int
		want   []string
	}{
		{"aaaaaa", 10, []string{"aaaaaa0002", "aaaaaa0001"}},
		{"aaaaa", 10, []string{"aaaaab0001", "aaaaaa0002", "aaaaaa0001"}},
		{"aaaaa", 1, []string{"aaaaab0001"}},
		{"bbbbbb0001", 10, []string{"bbbbbb0001"}},
		{"cccccc", 10, nil},
		{"%", 10, nil},
		{"aaaaa_", 10, nil},
		{`aaaaaa\`, 10, nil},
	}
	for _, tc := range tests {
		runs, err := e.s.FindRunsByPrefix(e.ctx, tc.prefix, tc.limit)
		if err != nil {
			t.Fatalf("FindRunsByPrefix(%q): %v", tc.prefix, err)
		}
		// The runs come newest first on every engine, as ListRuns lists them.
		if got := ids(runs); !equalIDs(got, tc.want) {
			t.Fatalf("FindRunsByPrefix(%q) = %v, want %v", tc.prefix, got, tc.want)
		}
	}
}

func testSetRunConversation(t *testing.T, e *env) {
	r := e.create(t, func(n *db.NewRun) { n.ConversationID = channelConv })
	if err := e.s.SetRunConversation(e.ctx, r.ID, threadConv); err != nil {
		t.Fatalf("SetRunConversation: %v", err)
	}
	if got := e.get(t, r.ID); got.ConversationID != threadConv || got.ParentConversationID != channelConv {
		t.Fatalf("run conversation %s parent %s, want %s and %s", got.ConversationID, got.ParentConversationID, threadConv, channelConv)
	}
	if err := e.s.SetRunConversation(e.ctx, "zzzzzzzzzz", threadConv); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("SetRunConversation of unknown run: %v, want ErrNotFound", err)
	}
	if err := e.s.SetRunConversation(e.ctx, r.ID, "slack:nowhere"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("SetRunConversation to unknown conversation: %v, want ErrNotFound", err)
	}
}

func ids(runs []db.Run) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.ID)
	}
	return out
}

func equalIDs(a, b []string) bool { return slices.Equal(a, b) }

// testListRunsInConversation: a conversation's runs are those started in it and those reporting in
// it (a thread the run opened), each once, newest first across the states asked for, at most the
// limit.
func testListRunsInConversation(t *testing.T, e *env) {
	started := e.create(t, func(n *db.NewRun) { n.ConversationID, n.ParentConversationID = channelConv, channelConv }) // no thread
	e.clock.Advance(time.Second)
	threaded := e.create(t, nil) // started in channelConv, reports in threadConv
	e.clock.Advance(time.Second)
	elsewhere := e.create(t, func(n *db.NewRun) { n.ConversationID, n.ParentConversationID = otherConv, otherConv })
	e.clock.Advance(time.Second)
	cancelled := must(t)(e.s.CancelRun(e.ctx, e.create(t, func(n *db.NewRun) {
		n.ConversationID, n.ParentConversationID = threadConv, otherConv // reports in the thread, started elsewhere
	}).ID, db.Actor{ID: "slack:U9"}, "not needed"))
	ids := func(f db.RunFilter) []string {
		t.Helper()
		runs, err := e.s.ListRuns(e.ctx, f)
		if err != nil {
			t.Fatalf("ListRuns(%+v): %v", f, err)
		}
		var out []string
		for _, r := range runs {
			out = append(out, r.ID)
		}
		return out
	}
	both := []db.Status{db.StatusQueued, db.StatusCancelled}
	for _, c := range []struct {
		f    db.RunFilter
		want []string
	}{
		{db.RunFilter{InConversation: channelConv, Statuses: both}, []string{threaded.ID, started.ID}},
		{db.RunFilter{InConversation: threadConv, Statuses: both}, []string{cancelled.ID, threaded.ID}},
		{db.RunFilter{InConversation: threadConv, Statuses: both, Limit: 1}, []string{cancelled.ID}},
		{db.RunFilter{InConversation: threadConv, Statuses: []db.Status{db.StatusQueued}}, []string{threaded.ID}},
		{db.RunFilter{InConversation: otherConv}, []string{cancelled.ID, elsewhere.ID}},
		// Each state up to its own limit (/workflow status's sections in one list), merged newest first.
		{db.RunFilter{InConversation: channelConv, Each: map[db.Status]int{db.StatusQueued: 1, db.StatusCancelled: 5}}, []string{threaded.ID}},
		{db.RunFilter{InConversation: channelConv, Each: map[db.Status]int{db.StatusQueued: 5}}, []string{threaded.ID, started.ID}}, // started once, named by both columns
		{db.RunFilter{InConversation: threadConv, Each: map[db.Status]int{db.StatusQueued: 5, db.StatusCancelled: 5}, WithoutSource: true},
			[]string{cancelled.ID, threaded.ID}},
		{db.RunFilter{InConversation: threadConv, Each: map[db.Status]int{db.StatusCancelled: 5}}, []string{cancelled.ID}},
		{db.RunFilter{Each: map[db.Status]int{db.StatusQueued: 2, db.StatusCancelled: 1}}, []string{cancelled.ID, elsewhere.ID, threaded.ID}},
	} {
		if got := ids(c.f); !reflect.DeepEqual(got, c.want) {
			t.Errorf("ListRuns(%+v) = %v, want %v", c.f, got, c.want)
		}
	}
}

// testCountRuns: counts per state in one statement, of a conversation too; with a limit a count
// stops past it.
func testCountRuns(t *testing.T, e *env) {
	for range 3 {
		e.create(t, nil)
	}
	e.runIn(t, fxCancelled, nil)
	e.runIn(t, fxCancelled, func(n *db.NewRun) { n.ConversationID, n.ParentConversationID = otherConv, otherConv })
	for _, c := range []struct {
		f    db.RunFilter
		want map[db.Status]int
	}{
		{db.RunFilter{}, map[db.Status]int{db.StatusQueued: 3, db.StatusCancelled: 2}},
		{db.RunFilter{InConversation: channelConv}, map[db.Status]int{db.StatusQueued: 3, db.StatusCancelled: 1}},
		{db.RunFilter{InConversation: otherConv, Statuses: []db.Status{db.StatusCancelled}}, map[db.Status]int{db.StatusCancelled: 1}},
		{db.RunFilter{Limit: 1}, map[db.Status]int{db.StatusQueued: 2, db.StatusCancelled: 2}}, // "more than 1"
		{db.RunFilter{Limit: 5, InConversation: channelConv}, map[db.Status]int{db.StatusQueued: 3, db.StatusCancelled: 1}},
	} {
		got, err := e.s.CountRuns(e.ctx, c.f)
		if err != nil {
			t.Fatalf("CountRuns(%+v): %v", c.f, err)
		}
		for st, n := range got { // a limited count names every state, most with 0
			if n == 0 {
				delete(got, st)
			}
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("CountRuns(%+v) = %v, want %v", c.f, got, c.want)
		}
	}
}
