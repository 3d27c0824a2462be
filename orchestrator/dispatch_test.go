package orchestrator_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"threadflow/db"
	"threadflow/testkit/runevents"
)

// failing is a workflow whose first node fails until the file $FIXED exists, and which writes its
// arguments to a file in its working directory, so tests can see which request a run executed.
const failing = `
name: deploy
nodes:
  - id: parse
    bash: printf '%s' "$ARGUMENTS" > request.txt; test -f "$FIXED" || { echo "cannot parse" >&2; exit 1; }
  - id: apply
    depends_on: [parse]
    bash: cat request.txt
`

func failedDeploy(t *testing.T, h *harness, args string) db.Run {
	t.Helper()
	t.Setenv("FIXED", filepath.Join(t.TempDir(), "fixed"))
	h.writeWorkflow("deploy", failing)
	run := h.waitStatus(h.startRun("deploy", args).ID, db.StatusFailed)
	// The failure notice follows the store write; wait for it so a later h.say does not take it
	// for a reply (CI caught exactly that).
	h.waitMessage(fmt.Sprintf("Run %s of deploy failed", run.ID))
	return run
}

func TestFreshRunWithPriorFailedRunPromptsAndRunsNothing(t *testing.T) {
	eachEngineSerial(t, func(t *testing.T, h *harness) {
		prior := failedDeploy(t, h, "task A <!channel> `rm` \"q\" "+strings.Repeat("long ", 60))
		replies := h.say(admin, "", `/workflow run deploy "task B"`)
		if runs := h.runs("deploy"); len(runs) != 1 {
			t.Fatalf("%d runs exist, want only the prior one: a fresh run must not start or resume", len(runs))
		}
		text := joined(replies)
		for _, want := range []string{
			prior.ID, "failed", "task A <!channel>", "…",
			"/workflow resume " + prior.ID,
			"/workflow abandon " + prior.ID,
			`/workflow run deploy --force "task B"`,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("prompt lacks %q:\n%s", want, text)
			}
		}
		if len(replies) != 1 || len(replies[0].Buttons) != 3 {
			t.Fatalf("want one prompt with Resume, Abandon and Start fresh buttons, got %+v", replies)
		}
		if got, _ := h.store.GetRun(context.Background(), prior.ID); got.Status != db.StatusFailed || got.Attempt != 0 {
			t.Fatalf("prior run changed: %s attempt %d", got.Status, got.Attempt)
		}
	})
}

func TestSuggestedForceCommandEscapesQuotesBackslashesAndBackticks(t *testing.T) {
	eachEngineSerial(t, func(t *testing.T, h *harness) {
		failedDeploy(t, h, "A")
		replies := h.say(admin, "", `/workflow run deploy 'say "hi" \ `+"`now`'")
		want := `/workflow run deploy --force "say \"hi\" \\ \` + "`now\\`\""
		if text := joined(replies); !strings.Contains(text, want) {
			t.Fatalf("prompt lacks %s:\n%s", want, text)
		}
	})
}

func TestForceStartsAFreshRunAndLeavesTheOldOneAlone(t *testing.T) {
	eachEngineSerial(t, func(t *testing.T, h *harness) {
		prior := failedDeploy(t, h, "task A")
		eventsBefore := len(h.events(prior.ID))
		if err := os.WriteFile(os.Getenv("FIXED"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		h.say(admin, "", `/workflow run deploy --force "task B"`)
		runs := h.runs("deploy")
		if len(runs) != 2 {
			t.Fatalf("%d runs, want the old and a fresh one", len(runs))
		}
		fresh := h.waitStatus(runs[0].ID, db.StatusCompleted)
		if fresh.ID == prior.ID || fresh.Meta.Output != "task B" || fresh.WorkingPath == prior.WorkingPath {
			t.Fatalf("fresh run %s output %q in %s; want new id, new args, new directory", fresh.ID, fresh.Meta.Output, fresh.WorkingPath)
		}
		old, _ := h.store.GetRun(context.Background(), prior.ID)
		if old.Status != db.StatusFailed || old.Attempt != 0 || len(h.events(prior.ID)) != eventsBefore {
			t.Fatalf("old run changed: %s attempt %d", old.Status, old.Attempt)
		}
	})
}

func TestAbandonFailedRunThenRunDoesNotPrompt(t *testing.T) {
	eachEngineSerial(t, func(t *testing.T, h *harness) {
		prior := failedDeploy(t, h, "task A")
		h.say(admin, "", "/workflow abandon "+prior.ID[:6])
		if got, _ := h.store.GetRun(context.Background(), prior.ID); got.Status != db.StatusCancelled {
			t.Fatalf("abandoned run is %s, want cancelled", got.Status)
		}
		replies := h.say(admin, "", `/workflow run deploy "task B"`)
		if strings.Contains(joined(replies), "Nothing was started") || len(h.runs("deploy")) != 2 {
			t.Fatalf("run after abandon prompted or did not start:\n%s", joined(replies))
		}
	})
}

func TestAbandonRefusesCompletedRunsAndStrangers(t *testing.T) {
	eachEngineSerial(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("quick", "name: quick\nnodes:\n  - id: a\n    bash: echo hi\n")
		run := h.waitStatus(h.startRun("quick", "").ID, db.StatusCompleted)
		if text := joined(h.say(admin, "", "/workflow abandon "+run.ID)); !strings.Contains(text, "is completed") {
			t.Fatalf("abandon of a completed run said:\n%s", text)
		}
		h.writeWorkflow("deploy", failing)
		t.Setenv("FIXED", filepath.Join(t.TempDir(), "nope"))
		failed := h.waitStatus(h.startRun("deploy", "x").ID, db.StatusFailed)
		if text := joined(h.say("console:mallory", "", "/workflow abandon "+failed.ID)); !strings.Contains(text, "or an admin (ADMIN_USER_IDS) may abandon") {
			t.Fatalf("stranger's abandon said:\n%s", text)
		}
		if got, _ := h.store.GetRun(context.Background(), failed.ID); got.Status != db.StatusFailed {
			t.Fatalf("stranger changed the run to %s", got.Status)
		}
	})
}

func TestExplicitResumeResumesOnceWithoutPrompt(t *testing.T) {
	eachEngineSerial(t, func(t *testing.T, h *harness) {
		prior := failedDeploy(t, h, "task A")
		if err := os.WriteFile(os.Getenv("FIXED"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		replies := h.say(admin, "", "/workflow resume "+prior.ID)
		if text := joined(replies); strings.Contains(text, "Nothing was started") || !strings.Contains(text, "Resuming run "+prior.ID) {
			t.Fatalf("resume replied:\n%s", text)
		}
		run := h.waitStatus(prior.ID, db.StatusCompleted)
		if len(h.runs("deploy")) != 1 || run.Meta.Output != "task A" || run.Attempt != 1 {
			t.Fatalf("resume created runs or ran other args: output %q attempt %d", run.Meta.Output, run.Attempt)
		}
	})
}

func TestApprovingInPlainWordsResumesWithoutPrompt(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("gated", "name: gated\nnodes:\n  - id: ok\n    approval: {message: \"ok?\"}\n  - id: done\n    depends_on: [ok]\n    bash: echo done\n")
		run := h.waitStatus(h.startRun("gated", "").ID, db.StatusPaused)
		thread := runThread(t, h, run.ID)
		gates := h.waitMessage("reply in this thread")
		if len(gates) != 1 || len(gates[0].Buttons) != 2 {
			t.Fatalf("want one gate message with Approve and Reject buttons:\n%s", h.out.Dump())
		}
		if text := joined(h.say(admin, thread, "hmm, not sure")); !strings.Contains(text, "could not tell") {
			t.Fatalf("unclear answer replied:\n%s", text)
		}
		if got, _ := h.store.GetRun(context.Background(), run.ID); got.Status != db.StatusPaused {
			t.Fatalf("unclear answer changed the run to %s", got.Status)
		}
		replies := h.say(admin, thread, "LGTM 👍")
		if strings.Contains(joined(replies), "Nothing was started") {
			t.Fatalf("approval prompted:\n%s", joined(replies))
		}
		h.waitStatus(run.ID, db.StatusCompleted)
		if len(h.runs("gated")) != 1 {
			t.Fatal("approval created a new run")
		}
		gate := h.out.ByID(gates[0].ID)
		if !gate.Edited || len(gate.Buttons) != 0 || !strings.Contains(gate.Text, "Approved by console:admin") {
			t.Fatalf("gate message not edited to show the decision without buttons: %+v", gate)
		}
	})
}

func TestRejectInPlainWordsCancels(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("gated", "name: gated\nnodes:\n  - id: ok\n    approval: {message: \"ok?\"}\n")
		run := h.waitStatus(h.startRun("gated", "").ID, db.StatusPaused)
		h.say(admin, runThread(t, h, run.ID), "no")
		h.waitStatus(run.ID, db.StatusCancelled)
	})
}

func TestConcurrentResumesHaveOneWinner(t *testing.T) {
	eachEngineSerial(t, func(t *testing.T, h *harness) {
		prior := failedDeploy(t, h, "task A")
		h.shutdown() // nobody claims the run while the resumes race
		base := h.out.Count()
		var wg sync.WaitGroup
		for _, user := range []string{admin, ops} { // the owner and another admin
			wg.Add(1)
			go func() {
				defer wg.Done()
				h.say(user, "", "/workflow resume "+prior.ID)
			}()
		}
		wg.Wait()
		h.start()
		text := joined(h.out.Since(base))
		if !strings.Contains(text, "Resuming run") || strings.Count(text, "already being resumed") != 1 {
			t.Fatalf("replies:\n%s\nwant one resume and one 'already being resumed'", text)
		}
		if n := runevents.Count(h.events(prior.ID), db.EventResumeRequested, ""); n != 1 {
			t.Fatalf("%d resume events, want 1", n)
		}
	})
}

func TestUnknownWorkflowSuggestsClosestNames(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		text := joined(h.say(admin, "", "/workflow run helo world"))
		if !strings.Contains(text, "hello") || !strings.Contains(text, "/workflow list") {
			t.Fatalf("unknown workflow reply:\n%s", text)
		}
	})
}

func TestAmbiguousPrefixListsCandidates(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		conv, err := h.store.EnsureConversation(ctx, db.Conversation{ID: "console:chan", Platform: "console", ChannelID: "chan"})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"abcdef1234", "abcdef5678"} {
			_, err := h.store.CreateRun(ctx, db.NewRun{ID: id, Workflow: "hello", ConversationID: conv.ID, ParentConversationID: conv.ID,
				UserID: admin, WorkingPath: t.TempDir(), WorkflowSource: []byte("name: hello\nnodes: []\n")})
			if err != nil && !errors.Is(err, db.ErrDuplicate) {
				t.Fatal(err)
			}
		}
		h.shutdown()
		defer h.start()
		text := joined(h.say(admin, "", "/workflow status abcdef"))
		if !strings.Contains(text, "abcdef1234") || !strings.Contains(text, "abcdef5678") {
			t.Fatalf("ambiguous prefix reply:\n%s", text)
		}
	})
}

// The first command in a thread of a channel the bot never saw records the channel and the thread
// with the run (one write), and the next command there, with both known, starts its run too.
func TestFirstCommandInAThreadRecordsItsConversations(t *testing.T) {
	eachEngineSerial(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("hello", "name: hello\nnodes:\n  - id: hi\n    bash: \"true\"\n")
		for i := range 2 {
			h.say(admin, "T5", fmt.Sprintf("/workflow run hello --force %d", i))
			if runs := h.runs("hello"); len(runs) != i+1 || runs[0].ParentConversationID != "console:chan:T5" {
				t.Fatalf("after command %d: runs %+v, want %d, the newest asked for in console:chan:T5\n%s", i, runs, i+1, h.out.Dump())
			}
		}
		// The stored fields win over these (see EnsureConversation): a thread recorded without its
		// parent, or not at all, would come back with no parent.
		got, err := h.store.EnsureConversation(context.Background(), db.Conversation{ID: "console:chan:T5", Platform: "console", ChannelID: "x"})
		if err != nil || got.ParentID != "console:chan" || got.ThreadID != "T5" {
			t.Fatalf("the thread asked in = %+v, %v; want it recorded under console:chan", got, err)
		}
	})
}
