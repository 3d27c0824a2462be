package orchestrator

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"threadflow/agent"
	"threadflow/db"
	"threadflow/workflow"
)

// runNode runs one node to a result, retrying within its budget. The budget is counted from
// node_failed events in the database (h.failures), so a rescued run does not get a fresh one.
func (e *execution) runNode(ctx context.Context, n *workflow.Node, v workflow.Vars, h nodeHistory, out chan<- nodeResult) {
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
		if err := e.record(ctx, db.EventNodeStarted, n.ID, res.attempt, struct{}{}); err != nil {
			res.err = err
			return
		}
		v.Attempt = res.attempt
		output, pause, err := e.runKind(ctx, n, v, &h)
		if err == nil {
			res.output, res.pause = output, pause
			if pause == nil {
				res.err = e.recordCompleted(ctx, n, res.attempt, output, res.started)
			}
			return
		}
		if ctx.Err() != nil { // interrupted, not failed: lease lost, shutdown or abandon
			res.err = context.Cause(ctx)
			return
		}
		ne := asNodeError(err)
		failures++
		retry := retryable(n, ne) && failures < n.Retry.MaxAttempts
		data := nodeData{Error: ne.msg, Class: ne.class, WillRetry: retry}
		if rerr := e.record(ctx, db.EventNodeFailed, n.ID, res.attempt, data); rerr != nil {
			res.err = rerr
			return
		}
		if !retry {
			res.err = ne
			return
		}
		e.x.observer().Retried(e.run.Workflow)
		if serr := e.x.sleep(ctx, backoff(n.Retry.Delay, failures)); serr != nil {
			res.err = context.Cause(ctx)
			return
		}
		res.attempt++
	}
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

// runKind runs one attempt of a node. A non-nil pause means the node waits for a person.
func (e *execution) runKind(ctx context.Context, n *workflow.Node, v workflow.Vars, h *nodeHistory) (string, *db.Pause, error) {
	ctx, cancel := withTimeout(ctx, n.Timeout)
	defer cancel()
	var (
		out   string
		pause *db.Pause
		err   error
	)
	switch n.Kind {
	case workflow.KindBash:
		out, err = runShell(ctx, e.run.WorkingPath, workflow.ShellScript(n.Bash), append(workflow.ShellEnv(v), runMarker(e.run.ID)))
	case workflow.KindPrompt:
		out, err = e.runPrompt(ctx, n, v)
	case workflow.KindApproval:
		out, pause = e.runApproval(n, v, h)
	case workflow.KindLoop:
		out, pause, err = e.runLoop(ctx, n, v, h)
	default:
		err = &nodeError{class: db.ClassPermanent, msg: fmt.Sprintf("node %s has no kind", n.ID)}
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

// recordCompleted writes node_completed. Output larger than spillLimit is written in full to the
// artifacts directory and the event keeps its beginning and the file's path.
func (e *execution) recordCompleted(ctx context.Context, n *workflow.Node, attempt int, output string, started time.Time) error {
	data := nodeData{Output: output, DurationMS: e.x.now().Sub(started).Milliseconds()}
	if len(output) > spillLimit {
		path := filepath.Join(e.artifactsDir(), n.ID+".output")
		if err := os.MkdirAll(e.artifactsDir(), 0o755); err == nil && os.WriteFile(path, []byte(output), 0o644) == nil {
			data.Output = truncateUTF8(output, spillLimit) + "\n… (truncated; full output in " + path + ")"
			data.OutputPath = path
		}
	}
	return e.record(ctx, db.EventNodeCompleted, n.ID, attempt, data)
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n]
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
