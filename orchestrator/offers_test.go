package orchestrator_test

import (
	"strings"
	"testing"

	"threadflow/db"
	"threadflow/orchestratortest"
)

// onlyIn returns the texts of the messages posted in thread ("" for the channel), excluding edits.
func onlyIn(ps []orchestratortest.Posted, thread string) []string {
	var out []string
	for _, p := range ps {
		if p.To.ThreadID == thread && !p.Edited {
			out = append(out, p.Text)
		}
	}
	return out
}

// exactlyOne fails unless texts is exactly want, said once.
func exactlyOne(t *testing.T, what string, texts []string, want string) {
	t.Helper()
	if len(texts) != 1 || texts[0] != want {
		t.Errorf("%s said %q,\nwant exactly %q", what, texts, want)
	}
}

// A requester whom the gate does not let approve is told who may and offered Reject, on every path
// that speaks to them alone: the refusal, the question about their unclear reply, the resume gate's
// prompt and a refused resume. Someone who may approve is still offered both.
func TestTheRequesterIsOfferedRejectNotApprove(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		run, thread := gated(t, h, "allow_self_approval: false")
		id := run.ID
		exactlyOne(t, "the requester's own approval", onlyIn(h.say(admin, thread, "lgtm"), thread),
			"You started this run, and gate confirm of run "+id+" does not allow self-approval. Nothing was changed. "+
				"Someone other than you must approve it. You may reject it: /workflow reject "+id+" [reason]. "+
				"In a terminal, answer as someone else with --user NAME (bot chat --user NAME ... or bot workflow approve --user NAME "+id+").")

		asked := h.say(admin, thread, "maybe?")
		exactlyOne(t, "the requester's unclear reply", onlyIn(asked, thread),
			"🤔 I could not tell whether that approves or rejects confirm of run "+id+": it asks a question. Nothing was changed.\nYou said: maybe?\n"+
				"Reply again with a clear no (a reason may follow after a comma), or use the button to reject with these words as they are. "+
				"Someone other than you must approve it.")
		if got := labels(asked[0]); got != "Reject with this reason" {
			t.Errorf("the requester's ask-back offers %s, want Reject only", got)
		}
		if got := labels(h.say(ops, thread, "maybe?")[0]); got != "Approve with this note|Reject with this reason" {
			t.Errorf("someone else's ask-back offers %s, want both", got)
		}

		prompt := h.say(admin, "", "/workflow run release v2")
		if texts := onlyIn(prompt, ""); len(texts) != 1 ||
			!strings.Contains(texts[0], "\n• /workflow reject "+id+" - reject its gate. Someone other than you must approve it.\n") ||
			strings.Contains(texts[0], "/workflow approve") {
			t.Errorf("the resume gate's prompt to the requester:\n%s", joined(prompt))
		}
		if got := labels(prompt[0]); got != "Reject|Abandon|Start fresh" {
			t.Errorf("the resume gate's prompt to the requester offers %s", got)
		}
		if got := labels(h.say(ops, "", "/workflow run release v2")[0]); got != "Approve|Abandon|Start fresh" {
			t.Errorf("the resume gate's prompt to someone who may approve offers %s", got)
		}
		exactlyOne(t, "the requester's resume", onlyIn(h.say(admin, "", "/workflow resume "+id), ""),
			"Run "+id+" is waiting at a gate, which resuming does not answer. Someone other than you must approve it. "+
				"You may reject it: /workflow reject "+id+" [reason].")
	})
}

// A gate that names its approvers names the others to a requester it does not let approve.
func TestTheRequesterIsToldWhichApproversMayApprove(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		run, thread := gated(t, h, `approvers: ["console:alice", "`+admin+`"]`, "allow_self_approval: false")
		exactlyOne(t, "the requester's unclear reply", onlyIn(h.say(admin, thread, "maybe?"), thread),
			"🤔 I could not tell whether that approves or rejects confirm of run "+run.ID+": it asks a question. Nothing was changed.\nYou said: maybe?\n"+
				"Reply again with a clear no (a reason may follow after a comma), or use the button to reject with these words as they are. "+
				"It needs an approval from someone other than you: console:alice.")
		asked := h.say("console:mallory", thread, "maybe?")
		exactlyOne(t, "an unclear reply of someone the gate does not name", onlyIn(asked, thread),
			"🤔 I could not tell whether that approves or rejects confirm of run "+run.ID+": it asks a question. Nothing was changed.\nYou said: maybe?\n"+
				"Only console:alice, "+admin+" may answer it.")
		if len(asked[0].Buttons) != 0 {
			t.Errorf("someone the gate does not name is offered %s", labels(asked[0]))
		}
	})
}

// Cancel says the run was cancelled, abandon that it was abandoned, each once where the run
// reports, and once more where it was asked from when that is elsewhere.
func TestCancelAndAbandonSayWhatTheyDidOnce(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("slow", "name: slow\nnodes:\n  - id: wait\n    bash: sleep 60\n")
		run := h.startRun("slow", "")
		h.waitStatus(run.ID, db.StatusRunning)
		thread := runThread(t, h, run.ID)
		said := h.say(admin, thread, "/workflow cancel")
		h.waitStatus(run.ID, db.StatusCancelled)
		exactlyOne(t, "a cancel typed in the run's thread", onlyIn(said, thread),
			"Cancelled run "+run.ID+" of slow (was running; by console:admin): what it was running is stopped. A new /workflow run slow starts fresh.")

		paused, thread := gated(t, h)
		said = h.say(ops, "", "/workflow abandon "+paused.ID)
		want := "Abandoned run " + paused.ID + " of release (was paused; by console:ops). A new /workflow run release starts fresh."
		exactlyOne(t, "an abandon typed in the channel, in the channel", onlyIn(said, ""), want)
		exactlyOne(t, "an abandon typed in the channel, in the run's thread", onlyIn(said, thread), want)
	})
}
