package orchestrator_test

import (
	"context"
	"strings"
	"testing"

	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestratortest"
)

// NUL bytes, invalid UTF-8 and oversized arguments are refused with a message naming the limit,
// before anything is written: no run, no thread saying "queued", no recorded gate reply.
func TestInputLimitsRefuseBeforeAnythingIsWritten(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("echo", "name: echo\nnodes:\n  - id: a\n    bash: printf '%s' \"$ARGUMENTS\" | wc -c\n")
		for _, c := range []struct{ text, want string }{
			{"/workflow run echo a\x00b", "NUL byte"},
			{"/workflow run echo \xff\xfe", "not valid UTF-8"},
			{"/workflow run echo " + strings.Repeat("y", 200_000), "at most 16000 bytes (MAX_ARGS_BYTES), and this one is 200000 bytes"},
		} {
			got := joined(h.say(admin, "", c.text))
			if !strings.Contains(got, c.want) || strings.Contains(got, "try again") {
				t.Errorf("%.30q answered:\n%s\nwant a refusal naming %q", c.text, got, c.want)
			}
		}
		if runs := h.runs("echo"); len(runs) != 0 {
			t.Fatalf("refused messages created %d runs", len(runs))
		}
		if q := h.out.Find("queued"); len(q) != 0 {
			t.Fatalf("a refused run left a thread saying queued:\n%s", h.out.Dump())
		}
		// At the limit, the run starts and its node sees every byte.
		run := h.waitStatus(h.startRun("echo", strings.Repeat("z", 16_000)).ID, db.StatusCompleted, db.StatusFailed)
		if run.Status != db.StatusCompleted || strings.TrimSpace(run.Meta.Output) != "16000" {
			t.Fatalf("run with 16000 bytes of arguments: %s, output %q (%+v)", run.Status, run.Meta.Output, run.Meta.LastError)
		}
	})
}

// A reply at a gate is checked as any message: a NUL is refused in the thread and records nothing.
func TestGateReplyWithANulIsRefusedAndNotRecorded(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("gate", "name: gate\nnodes:\n  - id: ok\n    approval: {message: \"Go?\"}\n")
		run := h.waitStatus(h.startRun("gate", "").ID, db.StatusPaused)
		thread := h.waitMessage("Go?")[0].To.ThreadID
		before := len(h.events(run.ID))
		got := joined(h.say(ops, thread, "lgtm\x00"))
		if !strings.Contains(got, "NUL byte") {
			t.Fatalf("gate reply with a NUL answered:\n%s", got)
		}
		got = joined(h.say(ops, "", "/workflow approve "+run.ID+" "+strings.Repeat("n", 16_001)))
		if !strings.Contains(got, "an approval's note may be at most 16000 bytes (MAX_ARGS_BYTES)") {
			t.Fatalf("oversized approval note answered:\n%s", got)
		}
		if after := len(h.events(run.ID)); after != before {
			t.Fatalf("refused replies recorded %d events", after-before)
		}
		if r := h.waitStatus(run.ID, db.StatusPaused); r.Status != db.StatusPaused {
			t.Fatalf("run is %s", r.Status)
		}
	})
}

// Chatter not meant for the bot is refused silently; a reply in a waiting run's thread is answered.
func TestRefusalsAnswerOnlyMessagesMeantForTheBot(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("gate", "name: gate\nnodes:\n  - id: ok\n    approval: {message: \"Go?\"}\n")
		h.waitStatus(h.startRun("gate", "").ID, db.StatusPaused)
		gateThread := h.waitMessage("Go?")[0].To.ThreadID
		overheard := func(thread, text string) []orchestratortest.Posted {
			before := h.out.Count()
			h.engine.Dispatcher.Handle(context.Background(), conversation.Message{Address: conversation.Address{Platform: "console", ChannelID: "chan", ThreadID: thread},
				UserID: ops, Text: text})
			return h.out.Since(before)
		}
		if got := overheard("", strings.Repeat("log line\n", 3000)); len(got) != 0 {
			t.Fatalf("a long paste in the channel was answered:\n%s", joined(got))
		}
		if got := overheard("some-other-thread", "a\x00b"); len(got) != 0 {
			t.Fatalf("a NUL in an unrelated thread was answered:\n%s", joined(got))
		}
		if got := joined(overheard(gateThread, "lgtm\x00")); !strings.Contains(got, "NUL byte") {
			t.Fatalf("a NUL in the gate's thread was not refused:\n%s", got)
		}
	})
}
