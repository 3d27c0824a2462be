package orchestrator_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"threadflow/db"
	"threadflow/orchestrator/execution"
)

// bigOutputWorkflow prints 200 KB (more than the 128 KiB one environment variable may hold) and a
// consumer that reports what it received: the size and digest of $produce.output, and of the file
// TF_OUTPUT_PRODUCE_FILE names. Its first attempt fails after reporting, so the run is resumed and
// the consumer runs again on the upstream output read back from the database.
const bigOutputWorkflow = `
name: big
nodes:
  - id: produce
    bash: |
      head -c 204800 /dev/zero | tr '\0' 'x'
      printf '\nlast line\n'
  - id: consume
    depends_on: [produce]
    bash: |
      printf 'inline %s %s\n' "$(printf '%s' "$produce.output" | wc -c)" "$(printf '%s' "$produce.output" | cksum)"
      printf 'file %s\n' "$(cksum < "$TF_OUTPUT_PRODUCE_FILE")"
      if [ ! -e "$ARTIFACTS_DIR/resumed" ]; then touch "$ARTIFACTS_DIR/resumed"; exit 1; fi
`

func TestBigOutputReachesTheNextNodeTheSameBeforeAndAfterAResume(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("big", bigOutputWorkflow)
		run := h.waitStatus(h.startRun("big", "").ID, db.StatusFailed)
		if e := run.Meta.LastError; e == nil || e.Node != "consume" || e.Message != "exit status 1" {
			t.Fatalf("last error = %+v; want consume's own exit 1 (a start failure would say argument list too long)", e)
		}
		h.restart() // the resumed execution knows only what the database and the files say
		h.say(admin, "", "/workflow resume "+run.ID)
		run = h.waitStatus(run.ID, db.StatusCompleted)

		produced := nodeEvent(t, h.events(run.ID), db.EventNodeCompleted, "produce")
		if produced.OutputBytes != 204800+len("\nlast line\n") || len(produced.Output) != execution.InlineLimit {
			t.Fatalf("produce recorded %d inline bytes of %d; want the first %d of %d", len(produced.Output), produced.OutputBytes,
				execution.InlineLimit, 204800+len("\nlast line\n"))
		}
		before := readFile(t, nodeEvent(t, h.events(run.ID), db.EventNodeFailed, "consume").OutputPath)
		after := readFile(t, nodeEvent(t, h.events(run.ID), db.EventNodeCompleted, "consume").OutputPath)
		if before != after {
			t.Fatalf("consume saw different inputs before and after the resume:\nbefore: %safter:  %s", before, after)
		}
		if want := "inline 16384 "; !strings.HasPrefix(before, want) {
			t.Fatalf("consume reported %q; want $produce.output to be the first %d bytes", before, execution.InlineLimit)
		}
		if whole := readFile(t, produced.OutputPath); len(whole) != produced.OutputBytes || !strings.HasSuffix(whole, "x\nlast line\n") {
			t.Fatalf("the output file holds %d bytes ending %q; want all %d", len(whole), whole[max(0, len(whole)-20):], produced.OutputBytes)
		}
	})
}

// A shell node's environment carries the outputs of the nodes it depends on and of the ancestors its
// script names, not every ancestor's: the variable names are listed from inside the real process
// (built with $(...) so the listing does not itself name an ancestor).
func TestShellNodeGetsTheOutputsItDependsOnOrNames(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("inputs", `
name: inputs
nodes:
  - id: a
    bash: echo from-a
  - id: b
    depends_on: [a]
    bash: echo from-b
  - id: list
    depends_on: [b]
    bash: env | cut -d= -f1 | grep "^TF_OUT""PUT_" | sort | tr '\n' ' '
  - id: named
    depends_on: [b]
    bash: |
      # reads TF_OUTPUT_A through a child process
      sh -c 'printf "%s" "$TF_OUTPUT_A"'
`)
		run := h.waitStatus(h.startRun("inputs", "").ID, db.StatusCompleted)
		evs := h.events(run.ID)
		if got, want := nodeEvent(t, evs, db.EventNodeCompleted, "list").Output, "TF_OUTPUT_B TF_OUTPUT_B_FILE "; got != want {
			t.Errorf("node list saw %q; want only its dependency b's variables %q", got, want)
		}
		if got := nodeEvent(t, evs, db.EventNodeCompleted, "named").Output; got != "from-a" {
			t.Errorf("node named saw TF_OUTPUT_A = %q in a child process; want from-a (its script names it)", got)
		}
	})
}

// $node.output loses its trailing newlines, as the shell's $(...) does: `echo ok` gives "ok".
func TestNodeOutputHasNoTrailingNewline(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("nl", `
name: nl
nodes:
  - id: a
    bash: printf 'ok\n\n\n'
  - id: b
    depends_on: [a]
    bash: |
      [ "$a.output" = ok ] && [ "$TF_OUTPUT_A" = ok ] && [ "$(wc -c < "$TF_OUTPUT_A_FILE")" -eq 5 ]
`)
		h.waitStatus(h.startRun("nl", "").ID, db.StatusCompleted)
	})
}

// eventOutput is the output part of a node event's payload, as stored.
type eventOutput struct {
	Output      string `json:"output"`
	OutputBytes int    `json:"output_bytes"`
	OutputPath  string `json:"output_path"`
}

func nodeEvent(t *testing.T, events []db.Event, typ db.EventType, node string) eventOutput {
	t.Helper()
	for _, e := range events {
		if e.Type == typ && e.NodeID == node {
			var d eventOutput
			if err := json.Unmarshal(e.Data, &d); err != nil {
				t.Fatal(err)
			}
			return d
		}
	}
	t.Fatalf("no %s event of node %s", typ, node)
	return eventOutput{}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read output file: %v", err)
	}
	return string(b)
}

// An agent's reply is an output like a script's: a file, and the inline value later nodes read.
func TestAgentReplyIsKeptAsAnOutputFile(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.script.SetReply("the plan\n")
		h.writeWorkflow("plan", `
name: plan
nodes:
  - id: draft
    prompt: draft a plan
    provider: claude
  - id: save
    depends_on: [draft]
    bash: |
      [ "$draft.output" = "the plan" ] && cat "$TF_OUTPUT_DRAFT_FILE"
`)
		run := h.waitStatus(h.startRun("plan", "").ID, db.StatusCompleted)
		if got := readFile(t, nodeEvent(t, h.events(run.ID), db.EventNodeCompleted, "save").OutputPath); got != "the plan\n" {
			t.Fatalf("save printed %q from the draft's output file, want the whole reply", got)
		}
	})
}
