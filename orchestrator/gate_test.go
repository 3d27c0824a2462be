package orchestrator_test

import (
	"context"
	"strings"
	"testing"

	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestratortest"
	"threadflow/testkit/runevents"
)

// gated writes the release workflow with extra approval settings and starts it as admin, returning
// the paused run and its thread.
func gated(t *testing.T, h *harness, settings ...string) (db.Run, string) {
	t.Helper()
	h.writeWorkflow("release", orchestratortest.ReleaseWorkflow(settings...))
	run := h.waitStatus(h.startRun("release", "v1.2.3").ID, db.StatusPaused)
	h.waitMessage("is waiting at")
	return run, runThread(t, h, run.ID)
}

// click clicks a button of a posted message as user, as the adapters deliver a click.
func (h *harness) click(user string, msg orchestratortest.Posted, label string) []orchestratortest.Posted {
	h.t.Helper()
	for _, b := range msg.Buttons {
		if b.Label == label {
			before := h.out.Count()
			m := conversation.Message{Address: msg.To, UserID: user, Text: b.Command, Direct: true,
				Action: &conversation.Action{Ref: conversation.Ref{Address: msg.To, MessageID: msg.ID}}}
			h.engine.Dispatcher.Handle(context.Background(), m)
			h.delivered()
			return h.out.Since(before)
		}
	}
	h.t.Fatalf("message %s has no button %q: %+v", msg.ID, label, msg.Buttons)
	return nil
}

func shipped(h *harness) string {
	h.t.Helper()
	return h.waitMessage("shipped v1.2.3")[0].Text
}

func TestObjectionRejectsWithItsReason(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		run, thread := gated(t, h)
		h.say(admin, thread, "nah, fix the tests first")
		h.waitStatus(run.ID, db.StatusCancelled)
		h.waitMessage("🛑 Rejected by console:admin: gate confirm of run " + run.ID + " with reason: fix the tests first. The run is cancelled.")
		if status := joined(h.say(ops, "", "/workflow status "+run.ID)); !strings.Contains(status, "• gate confirm: 🛑 rejected by console:admin ") || !strings.Contains(status, " ago: fix the tests first\n") {
			t.Errorf("status does not show the rejection and its reason:\n%s", status)
		}
		if len(h.out.Find("shipped")) != 0 {
			t.Fatalf("an objection shipped the release:\n%s", h.out.Dump())
		}
		ev := h.events(run.ID)
		if runevents.Count(ev, db.EventGateResolved, "confirm") != 1 || runevents.Count(ev, db.EventNodeStarted, "ship") != 0 {
			t.Fatalf("events: %+v", ev)
		}
	})
}

func TestApprovalNoteIsTheCapturedResponse(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		run, thread := gated(t, h)
		h.say(admin, thread, "lgtm, ship it")
		h.waitStatus(run.ID, db.StatusCompleted)
		if out := shipped(h); !strings.Contains(out, "with note [ship it]") {
			t.Fatalf("ship saw %q, want the note after the approval", out)
		}
	})
}

func TestUnclearReplyIsAskedBackAndCanBeUsedWithOneClick(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		run, thread := gated(t, h)
		replies := h.say(admin, thread, "ship it but not on <!channel> friday")
		if len(replies) != 1 || !strings.Contains(replies[0].Text, "I could not tell whether that approves or rejects confirm of run "+run.ID+": it also says “not”. Nothing was changed.") ||
			!strings.Contains(replies[0].Text, "You said: ship it but not on <!channel> friday") {
			t.Fatalf("unclear reply answered:\n%s", joined(replies))
		}
		ask := replies[0]
		if got := labels(ask); got != "Approve with this note|Reject with this reason" {
			t.Fatalf("ask-back buttons = %s", got)
		}
		if got, _ := h.store.GetRun(context.Background(), run.ID); got.Status != db.StatusPaused {
			t.Fatalf("an unclear reply changed the run to %s", got.Status)
		}
		h.click(ops, ask, "Approve with this note")
		h.waitStatus(run.ID, db.StatusCompleted)
		if out := shipped(h); !strings.Contains(out, "with note [ship it but not on <!channel> friday]") {
			t.Fatalf("ship saw %q, want the quoted reply as the note", out)
		}
		settled := h.out.ByID(ask.ID)
		if len(settled.Buttons) != 0 || !strings.Contains(settled.Text, "✅ Approved by console:ops") {
			t.Fatalf("ask-back after the answer: %+v; want the decision without buttons", settled)
		}
		if text := joined(h.click(ops, ask, "Reject with this reason")); !strings.Contains(text, "already answered") {
			t.Fatalf("a stale click said:\n%s", text)
		}
	})
}

func labels(p orchestratortest.Posted) string {
	var out []string
	for _, b := range p.Buttons {
		out = append(out, b.Label)
	}
	return strings.Join(out, "|")
}

func TestOnlyApproversMayAnswer(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		run, thread := gated(t, h, `approvers: ["console:alice", "@admins"]`)
		gate := h.waitMessage("is waiting at")[0]
		if !strings.Contains(gate.Text, "Who may answer: console:alice and the admins (ADMIN_USER_IDS).") {
			t.Fatalf("gate message does not say who may answer:\n%s", gate.Text)
		}
		paths := []func() []orchestratortest.Posted{
			func() []orchestratortest.Posted { return h.say("console:mallory", thread, "lgtm") },
			func() []orchestratortest.Posted { return h.say("console:mallory", thread, "no") },
			func() []orchestratortest.Posted { return h.click("console:mallory", gate, "Approve") },
			func() []orchestratortest.Posted {
				return h.say("console:mallory", "", "/workflow approve "+run.ID+" sure")
			},
			func() []orchestratortest.Posted { return h.say("console:mallory", "", "/workflow reject "+run.ID) },
		}
		for i, answer := range paths {
			text := joined(answer())
			if !strings.Contains(text, "You may not answer gate confirm of run "+run.ID+": only console:alice and the admins (ADMIN_USER_IDS) may. Nothing was changed.") {
				t.Fatalf("path %d: refused answer said:\n%s", i, text)
			}
		}
		if got, _ := h.store.GetRun(context.Background(), run.ID); got.Status != db.StatusPaused {
			t.Fatalf("a refused answer changed the run to %s", got.Status)
		}
		if n := runevents.Count(h.events(run.ID), db.EventGateRefused, "confirm"); n != len(paths) {
			t.Fatalf("%d refusals recorded, want %d", n, len(paths))
		}
		if got := h.out.ByID(gate.ID); len(got.Buttons) != 2 {
			t.Fatalf("a refused click settled the gate message: %+v", got)
		}
		h.say("console:alice", thread, "approved")
		h.waitStatus(run.ID, db.StatusCompleted)
	})
}

func TestSelfApprovalRefusedButSelfRejectionAllowed(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		run, thread := gated(t, h, "allow_self_approval: false")
		text := joined(h.say(admin, thread, "lgtm"))
		if !strings.Contains(text, "You started this run, and gate confirm of run "+run.ID+" does not allow self-approval") {
			t.Fatalf("self-approval said:\n%s", text)
		}
		h.say(ops, thread, "lgtm, go")
		h.waitStatus(run.ID, db.StatusCompleted)

		again, thread := gated(t, h, "allow_self_approval: false")
		h.say(admin, thread, "no, wrong version")
		h.waitStatus(again.ID, db.StatusCancelled)
	})
}

func TestTwoApprovalsFromDifferentPeople(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("two", `name: two
nodes:
  - id: gate
    approval: {message: "two of you?", required_approvals: 2}
  - id: after
    depends_on: [gate]
    bash: echo "done after $gate.output"
`)
		run := h.waitStatus(h.startRun("two", "").ID, db.StatusPaused)
		thread := runThread(t, h, run.ID)
		if text := joined(h.say("console:alice", thread, "lgtm")); !strings.Contains(text, "👍 Approved by console:alice (1 of 2 approvals): gate gate of run "+run.ID+" waits for 1 more approval from someone else.") {
			t.Fatalf("first approval said:\n%s", text)
		}
		if text := joined(h.say("console:alice", thread, "yes")); !strings.Contains(text, "You already approved gate gate of run "+run.ID+"; it needs 1 more approval from someone else.") {
			t.Fatalf("repeated approval said:\n%s", text)
		}
		if got, _ := h.store.GetRun(context.Background(), run.ID); got.Status != db.StatusPaused {
			t.Fatalf("one approval of two moved the run to %s", got.Status)
		}
		h.say("console:bob", thread, "+1")
		h.waitStatus(run.ID, db.StatusCompleted)
		h.waitMessage("✅ Approved by console:alice and console:bob: gate gate of run " + run.ID)
		h.waitMessage("done after approved by console:alice and console:bob")
		status := joined(h.say(ops, "", "/workflow status "+run.ID))
		for _, want := range []string{"• gate gate: 👍 approved by console:alice ", "• gate gate: ✅ approved by console:bob "} {
			if !strings.Contains(status, want) {
				t.Errorf("status lacks %q:\n%s", want, status)
			}
		}
	})
}

func TestGateTimeoutRejectsAndRemindsOnce(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		// The reminder is due 3s before the timeout: a timer loop woken late past both (a loaded
		// machine) would fire only the timeout, which wins, and the reminder would never come.
		run, _ := gated(t, h, "timeout: 4s", "remind_after: 1s")
		gate := h.waitMessage("is waiting at")[0]
		if !strings.Contains(gate.Text, "⏳ If nobody answers by ") || !strings.Contains(gate.Text, "(4s after it was asked), it is rejected.") {
			t.Fatalf("gate message does not say when it times out:\n%s", gate.Text)
		}
		h.waitMessage("⏰ Reminder: run " + run.ID + " of release is still waiting at confirm")
		h.waitStatus(run.ID, db.StatusCancelled)
		h.waitMessage("⌛ Gate confirm of run " + run.ID + " timed out: nobody answered within 4s. The gate is rejected and the run is cancelled.")
		if n := len(h.out.Find("⏰ Reminder")); n != 1 {
			t.Fatalf("%d reminders, want 1", n)
		}
		if got := h.out.ByID(gate.ID); len(got.Buttons) != 0 {
			t.Fatalf("the gate message kept its buttons after the timeout: %+v", got)
		}
		text := joined(h.say(ops, "", "/workflow approve "+run.ID))
		if !strings.Contains(text, "already answered: reject by the timeout") {
			t.Fatalf("approval after the timeout said:\n%s", text)
		}
	})
}

func TestStrangerCannotResumeSomeoneElsesRun(t *testing.T) {
	eachEngineSerial(t, func(t *testing.T, h *harness) {
		prior := failedDeploy(t, h, "task A")
		text := joined(h.say("console:mallory", "", "/workflow resume "+prior.ID))
		if !strings.Contains(text, "Only the run's owner (console:admin) or an admin (ADMIN_USER_IDS) may resume run "+prior.ID) {
			t.Fatalf("stranger's resume said:\n%s", text)
		}
		if got, _ := h.store.GetRun(context.Background(), prior.ID); got.Status != db.StatusFailed {
			t.Fatalf("a stranger's resume moved the run to %s", got.Status)
		}
	})
}
