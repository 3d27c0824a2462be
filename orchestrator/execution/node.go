package execution

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"threadflow/agent"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/workflow"
)

// runNode runs one node to a result, retrying within its budget. The budget is counted from
// node_failed events in the database (h.failures), so a rescued run does not get a fresh one.
//
// started, when set, is the first attempt's node_started, already asked for by the scheduler
// together with the completions that let the node start (commitGroup).
func (e *execution) runNode(ctx context.Context, n *workflow.Node, v workflow.Vars, h nodeHistory, started <-chan error, out chan<- nodeResult) {
	res := nodeResult{node: n, attempt: h.starts + 1, started: e.x.now()}
	if h.justAnswered && h.starts > 0 {
		// A person answered this node's gate: the attempt that asked continues. Its node_started
		// is already recorded, so recording it again below is an idempotent no-op.
		res.attempt = h.starts
		if !h.started.IsZero() {
			res.started = h.started // its duration is the time it waited for the person
		}
	}
	defer func() { res.finished = e.x.now(); out <- res }()
	failures := h.failures
	for {
		v.Attempt = res.attempt
		if started == nil { // a retry asks for its own
			started = e.recordLater(ctx, n.ID, res.attempt, db.NodeStartedData{})
		}
		// Nothing of the attempt runs before its node_started (and, for the first, the completions
		// committed with it) is durable: a crash never loses a node that ran. A shell node's
		// process starts meanwhile, its script held back by the gate (startGate).
		gate := &startGate{started: started}
		started = nil
		if n.Kind != workflow.KindBash {
			if err := gate.wait(); err != nil {
				res.err = err
				return
			}
		}
		output, pause, err := e.runKind(ctx, n, v, &h, gate)
		if gerr := gate.wait(); gerr != nil { // the script never ran
			res.err = gerr
			return
		}
		if err == nil && pause == nil {
			e.keepTyped(n, output)
			err = e.saveWorkspace(ctx, n.ID, res.attempt)
		}
		if err == nil {
			res.output, res.pause = output, pause
			if pause == nil {
				res.duration = measured(e.x.now().Sub(res.started))
				data := completedData(output, res.duration)
				res.complete = &data // the scheduler records it with what it lets start (commitGroup)
			}
			return
		}
		if ctx.Err() != nil { // interrupted, not failed: lease lost, shutdown or abandon
			res.err = context.Cause(ctx)
			return
		}
		ne := e.blameDisk(asNodeError(err))
		failures++
		retry := retryable(n, ne) && failures < n.Retry.MaxAttempts
		data := db.NodeFailedData{NodeOutputData: db.NodeOutputData{OutputBytes: output.Bytes, OutputPath: output.File}, Error: ne.msg, Class: ne.class, WillRetry: retry}
		if !retry {
			res.duration = measured(e.x.now().Sub(res.started))
			data.DurationMS = durationMS(res.duration)
		}
		if rerr := e.record(ctx, n.ID, res.attempt, data); rerr != nil {
			res.err = rerr
			return
		}
		if !retry {
			res.err = ne
			return
		}
		e.x.observer().Retried(e.run.Workflow)
		wait := backoff(n.Retry.Delay, failures)
		e.x.Notify.Notify(ctx, Notice{Kind: NoticeNote, Run: e.run, Node: n.ID, Text: retryText(n.ID, res.attempt, n.Retry.MaxAttempts, ne.msg, wait),
			Key: db.OwedKey(e.run.ID, "retry", strconv.Itoa(e.run.Attempt), n.ID, strconv.Itoa(res.attempt))})
		if serr := e.x.sleep(ctx, wait); serr != nil {
			res.err = context.Cause(ctx)
			return
		}
		res.attempt++
	}
}

// completedData is node_completed's payload: the output's inline value, its size and its file.
func completedData(out NodeOutput, took time.Duration) db.NodeCompletedData {
	return db.NodeCompletedData{NodeOutputData: out.data(), DurationMS: durationMS(took)}
}

// retryable decides whether a failure may be retried within the node's budget.
func retryable(n *workflow.Node, ne *nodeError) bool {
	switch ne.class {
	case db.ClassTransient:
		return true
	case db.ClassPermanent:
		return n.Retry.On == workflow.RetryAll
	}
	return false // infrastructure needs a person; a stale session was already retried fresh
}

// backoff doubles the configured delay for each failure, capped at ten times the delay.
func backoff(delay time.Duration, failures int) time.Duration {
	d := delay
	for i := 1; i < failures && d < 10*delay; i++ {
		d *= 2
	}
	return min(d, 10*delay)
}

func asNodeError(err error) *nodeError {
	var ne *nodeError
	if errors.As(err, &ne) {
		return ne
	}
	class := agent.ClassOf(err)
	if class == "" {
		class = db.ClassPermanent
	}
	msg, hint := err.Error(), providerHint(class)
	var ae *agent.Error
	if errors.As(err, &ae) {
		msg = cmp.Or(ae.Msg, msg)
		hint = cmp.Or(ae.Hint, hint)
	}
	return &nodeError{class: class, msg: msg, hint: hint}
}

func providerHint(class db.ErrorClass) string {
	if class == db.ClassInfra {
		return "install the provider CLI or log it in (CLAUDE_BIN, CODEX_BIN)"
	}
	return ""
}

// runKind runs one attempt of a node. A non-nil pause means the node waits for a person. The
// output is returned with a failure too, so the failed attempt's output can be read in its logs.
func (e *execution) runKind(ctx context.Context, n *workflow.Node, v workflow.Vars, h *nodeHistory, gate *startGate) (NodeOutput, *db.Pause, error) {
	ctx, cancel := withTimeout(ctx, n.Timeout)
	defer cancel()
	var (
		out   NodeOutput
		pause *db.Pause
		err   error
	)
	label := attemptLabel(v.Attempt)
	if up, field, why, bad := e.graph.MissingField(n, v); bad {
		return NodeOutput{}, nil, &nodeError{class: db.ClassPermanent, msg: fmt.Sprintf("node %s reads $%s.output.%s, but %s", n.ID, up, field, why)}
	}
	switch n.Kind {
	case workflow.KindBash:
		out, err = e.runBash(ctx, n, v, gate)
	case workflow.KindScript:
		out, err = e.runScript(ctx, n, v)
	case workflow.KindPrompt:
		var text string
		if text, err = e.runPrompt(ctx, n, v); err == nil {
			out, err = e.saveOutput(n.ID, label, text)
		}
	case workflow.KindApproval:
		var text string
		if text, pause = e.runApproval(n, v, h); pause == nil {
			out, err = e.saveOutput(n.ID, label, text)
		}
	case workflow.KindLoop:
		out, pause, err = e.runLoop(ctx, n, v, h)
	case workflow.KindWorkflow:
		out, err = e.runChild(ctx, n, v)
	case workflow.KindCancel:
		out, err = e.runCancel(ctx, n, v)
	default:
		err = &nodeError{class: db.ClassPermanent, msg: fmt.Sprintf("node %s has no kind", n.ID)}
	}
	if b := (*budgetReached)(nil); errors.As(err, &b) { // not a failure: the run pauses, resumable
		return out, &b.pause, nil
	}
	if err != nil && errors.Is(context.Cause(ctx), errNodeTimeout) {
		ne := &nodeError{class: db.ClassTransient, msg: fmt.Sprintf("timed out after %s", n.Timeout)}
		var ae *agent.Error
		if errors.As(err, &ae) && ae.LastError != "" {
			// "invalid API key" says more than the timeout, and needs a person rather than a retry.
			ne.msg += "; the CLI's last error: " + ae.LastError
			if ae.Class == db.ClassInfra {
				ne.class, ne.hint = ae.Class, ae.Hint
			}
		}
		err = ne
	}
	return out, pause, err
}

func attemptLabel(attempt int) string { return fmt.Sprintf("attempt-%d", attempt) }

// runBash runs a shell node with its standard output streamed to the attempt's output file.
func (e *execution) runBash(ctx context.Context, n *workflow.Node, v workflow.Vars, gate *startGate) (NodeOutput, error) {
	env, err := shellEnv(n, v)
	if err != nil {
		return NodeOutput{}, err
	}
	f, err := e.createOutput(n.ID, attemptLabel(v.Attempt))
	if err != nil {
		return NodeOutput{}, err
	}
	return e.finishProcess(n, f, runShell(ctx, e.run.WorkingPath, n.Shell, workflow.ShellScript(n.Bash), append(env, runMarker(e.run.ID)), f, gate))
}

// shellEnv is the environment of a shell node (v holds the outputs of its workflow.Graph.Inputs),
// refused when they exceed envOutputBudget rather than failing to start with "argument list too
// long".
func shellEnv(n *workflow.Node, v workflow.Vars) ([]string, error) {
	total := 0
	for id, out := range v.Outputs {
		total += len(out) + len(v.OutputFiles[id])
	}
	for _, fields := range v.Fields {
		for _, val := range fields {
			total += len(val)
		}
	}
	if total > envOutputBudget {
		return nil, &nodeError{class: db.ClassPermanent, msg: fmt.Sprintf(
			"node %s would get %d bytes of upstream outputs in its environment, more than the %d a process can safely start with; "+
				"depend on or name fewer nodes with large outputs, or have them write their results to files in $ARTIFACTS_DIR and print less", n.ID, total, envOutputBudget)}
	}
	return workflow.ShellEnv(v), nil
}

// retryShown is how much of a failed attempt's error a retry notice quotes; the full error is in
// the run's events and `/workflow status ID`.
const retryShown = 300

// ShortReason is the first line of an error, at most retryShown bytes.
func ShortReason(reason string) string {
	reason, _, _ = strings.Cut(reason, "\n")
	if len(reason) > retryShown {
		reason = string(cutPartialRune([]byte(reason[:retryShown]))) + "…"
	}
	return reason
}

// retryText tells the thread that an attempt failed and the node tries again, and why.
func retryText(node string, attempt, maxAttempts int, reason string, wait time.Duration) conversation.Text {
	reason = ShortReason(reason)
	next := "now"
	if wait > 0 {
		next = "in " + FormatDuration(wait)
	}
	return conversation.T(conversation.P("↻ Node "), conversation.C(node), conversation.P(fmt.Sprintf(" attempt %d of %d failed: ", attempt, maxAttempts)),
		conversation.O(reason), conversation.P(fmt.Sprintf("\nRetrying %s (attempt %d of %d).", next, attempt+1, maxAttempts)))
}
