package execution

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"threadflow/agent"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/workflow"
)

// sharedSessionNode keys the session that prompt nodes with `context: shared` continue in a run.
const sharedSessionNode = "*shared"

// runPrompt runs a prompt node: one agent turn, continuing the run's shared session when asked.
func (e *execution) runPrompt(ctx context.Context, n *workflow.Node, v workflow.Vars) (string, error) {
	p, err := e.provider(n)
	if err != nil {
		return "", err
	}
	var session string
	if n.Context == workflow.ContextShared {
		session = e.storedSession(ctx, sharedSessionNode)
	}
	res, err := e.turn(ctx, p, n, workflow.Expand(n.Prompt, v), session, v.Attempt)
	if err != nil {
		return "", err
	}
	e.saveSession(ctx, p, n.ID, res.SessionID)
	if n.Context == workflow.ContextShared {
		e.saveSession(ctx, p, sharedSessionNode, res.SessionID)
	}
	if n.OutputFormat != nil {
		return structuredOutput(n, res.Structured)
	}
	return res.Text, nil
}

// structuredOutput is a prompt node's output under output_format: the answer as compact JSON once
// it matches the schema. The CLIs are asked for the shape, but Codex does not check it and a model
// may still get it wrong, so the schema decides here, for every provider alike. A mismatch fails the
// node naming what is wrong; `retry` may ask again.
func structuredOutput(n *workflow.Node, answer []byte) (string, error) {
	if err := n.OutputFormat.Validate(answer); err != nil {
		return "", &nodeError{class: db.ClassPermanent, msg: fmt.Sprintf("the answer of node %s does not match its output_format: %v (answer: %s)",
			n.ID, err, ShortReason(string(answer)))}
	}
	return string(answer), nil
}

// runLoop runs a loop node from its next iteration. Completed iterations are recorded as
// loop_iteration_completed events, so a resumed loop continues at the next iteration and never
// repeats one. After an interactive gate, the person's reply reaches the prompt as
// $LOOP_USER_INPUT; approving ends the loop with the last iteration's output.
func (e *execution) runLoop(ctx context.Context, n *workflow.Node, v workflow.Vars, h *nodeHistory) (NodeOutput, *db.Pause, error) {
	p, err := e.provider(n)
	if err != nil {
		return NodeOutput{}, nil, err
	}
	l := n.Loop
	session, output := h.loopSession, h.loopOutput
	if l.Interactive && h.loopIter > 0 {
		answered := h.gate != nil && h.gateIter == h.loopIter
		if !answered {
			// The worker stopped between an iteration and its gate: ask about that iteration now
			// instead of running the next one unasked.
			return NodeOutput{}, e.loopGate(n, v, h.loopIter, session), nil
		}
		if h.gate.Decision == db.DecisionApprove {
			return output, nil, nil
		}
		v.LoopUserInput = h.gate.Text
	}
	for i := h.loopIter + 1; i <= l.MaxIterations; i++ {
		if l.FreshContext {
			session = ""
		}
		v.LoopIteration = i
		// After a gate the stored session may have expired during the human wait: turn tries it
		// and falls back to a fresh session when the provider says it is stale.
		res, err := e.turn(ctx, p, n, workflow.Expand(l.Prompt, v), session, i)
		if err != nil {
			return NodeOutput{}, nil, err
		}
		// Each iteration's reply is kept as a file like any output: the loop's output is the file
		// of the iteration that ended it, whether it ends now or after a resume.
		if output, err = e.saveOutput(n.ID, fmt.Sprintf("iteration-%d", i), res.Text); err != nil {
			return NodeOutput{}, nil, err
		}
		session = res.SessionID
		data := db.LoopIterationData{NodeOutputData: output.data(), SessionID: session}
		if err := e.record(ctx, n.ID, i, data); err != nil {
			return NodeOutput{}, nil, err
		}
		e.saveSession(ctx, p, n.ID, session)
		if l.Done(res.Text) {
			return output, nil, nil
		}
		if l.UntilBash != "" {
			done, err := e.untilBash(ctx, n, v, i)
			if err != nil {
				return NodeOutput{}, nil, err
			}
			if done {
				return output, nil, nil
			}
		}
		if l.Interactive {
			return NodeOutput{}, e.loopGate(n, v, i, session), nil
		}
	}
	ending := fmt.Sprintf("%q in its output", l.Until)
	if l.UntilBash != "" {
		ending = "until_bash succeeding"
	}
	return NodeOutput{}, nil, &nodeError{class: db.ClassPermanent,
		msg: fmt.Sprintf("loop %s reached max_iterations (%d) without %s", n.ID, l.MaxIterations, ending)}
}

// untilBash runs a loop's until_bash check after iteration i: exit status 0 ends the loop, any
// other status lets it go on. A check that cannot run at all fails the node. Its output is kept
// beside the iteration's, for whoever wonders why the loop went on.
func (e *execution) untilBash(ctx context.Context, n *workflow.Node, v workflow.Vars, i int) (bool, error) {
	env, err := shellEnv(n, v)
	if err != nil {
		return false, err
	}
	f, err := e.createOutput(n.ID, fmt.Sprintf("until-%d", i))
	if err != nil {
		return false, err
	}
	checkCtx, cancel := context.WithTimeout(ctx, workflow.UntilBashTimeout)
	defer cancel()
	runErr := runShell(checkCtx, e.run.WorkingPath, "bash", workflow.ShellScript(n.Loop.UntilBash), append(env, runMarker(e.run.ID)), f, nil)
	if err := f.Close(); err != nil {
		return false, outputError(n.ID, err)
	}
	var ne *nodeError
	switch {
	case errors.As(runErr, &ne) && ne.exited:
		return false, nil
	case runErr != nil && ctx.Err() == nil && checkCtx.Err() != nil:
		return false, &nodeError{class: db.ClassPermanent, msg: fmt.Sprintf("the until_bash check of loop %s ran longer than %s and was stopped", n.ID, workflow.UntilBashTimeout)}
	}
	return runErr == nil, runErr
}

// loopGate is the pause of an interactive loop after iteration i.
func (e *execution) loopGate(n *workflow.Node, v workflow.Vars, i int, session string) *db.Pause {
	v.LoopIteration = i
	msg := strings.TrimSpace(workflow.Expand(n.Loop.GateMessage, v))
	return &db.Pause{Kind: db.PauseLoop, Node: n.ID, Message: msg, LoopIteration: i, SessionID: session}
}

// turn runs one agent turn, attempt being the node's attempt or the loop's iteration, once the
// budgets allow it (checkBudgets), and records what it used (agent_usage). A stale-session error
// is never persisted and never fails the node by itself: the stored id is cleared in every scope
// that holds it, session_reset is recorded, the chat is told once that continuity was lost, and
// the turn is retried exactly once with a fresh session.
func (e *execution) turn(ctx context.Context, p Provider, n *workflow.Node, prompt, session string, attempt int) (agent.Result, error) {
	remaining, err := e.checkBudgets(ctx, n)
	if err != nil {
		return agent.Result{}, err
	}
	req := agent.Request{Prompt: prompt, Model: n.Model, SessionID: session, Dir: e.run.WorkingPath,
		Env: e.agentEnv(), Permissions: agent.Permissions(n.Permissions),
		IdleTimeout: n.IdleTimeout, Effort: n.Effort, Tools: n.Tools, ToolsSet: n.ToolsSet, DeniedTools: n.DeniedTools, Settings: n.Hooks,
		MaxBudgetNanos: remaining}
	if n.OutputFormat != nil {
		req.OutputSchema = n.OutputFormat.Schema
	}
	res, err := p.Run(ctx, req)
	e.recordUsage(ctx, p, n, attempt, res, err)
	if ae := (*agent.Error)(nil); errors.As(err, &ae) && ae.BudgetStop {
		return res, e.budgetStopped(ctx, n, ae)
	}
	if err == nil || session == "" || agent.ClassOf(err) != db.ClassStaleSession {
		return res, err
	}
	e.x.Log.Info("orchestrator.session_reset_completed", zap.String("run_id", e.run.ID), zap.String("node", n.ID), zap.String("provider", p.Name()))
	if rerr := e.record(ctx, n.ID, 0, db.SessionResetData{Provider: p.Name(), Reason: "stale session"}); rerr != nil {
		return agent.Result{}, rerr
	}
	// Every scope that may hold the dead id forgets it: the node's own, the run's shared session, and
	// (through the session_reset event) a loop's. Otherwise each later resume would try it again.
	e.saveSession(ctx, p, n.ID, "")
	if n.Context == workflow.ContextShared {
		e.saveSession(ctx, p, sharedSessionNode, "")
	}
	e.x.Notify.Notify(ctx, Notice{Kind: NoticeNote, Run: e.run, Node: n.ID, Text: conversation.T(
		conversation.P("Session continuity was lost for node "), conversation.C(n.ID),
		conversation.P(": the provider session had expired, so this turn starts a fresh session."))})
	req.SessionID = ""
	res, err = p.Run(ctx, req)
	e.recordUsage(ctx, p, n, attempt, res, err)
	if agent.ClassOf(err) == db.ClassStaleSession {
		err = &nodeError{class: db.ClassPermanent, msg: "the provider rejected a fresh session: " + err.Error()}
	}
	return res, err
}

func (e *execution) provider(n *workflow.Node) (Provider, error) {
	p, err := e.x.Providers.Provider(n.Provider)
	if err != nil {
		return nil, &nodeError{class: db.ClassInfra, msg: err.Error(), hint: "configure the provider (DEFAULT_PROVIDER, CLAUDE_BIN, CODEX_BIN)"}
	}
	return p, nil
}

func (e *execution) storedSession(ctx context.Context, node string) string {
	s, err := e.x.Store.GetSession(ctx, "", e.run.ID, node)
	if err != nil {
		if !errors.Is(err, db.ErrNotFound) {
			e.x.Log.Warn("orchestrator.session_read_failed", zap.String("run_id", e.run.ID), zap.Error(err))
		}
		return ""
	}
	return s.SessionID
}

// saveSession stores a node's provider session ("" clears it). Failing to store it costs only
// continuity, never the node, so it is logged and not returned.
func (e *execution) saveSession(ctx context.Context, p Provider, node, id string) {
	err := e.x.Store.SetSession(ctx, db.Session{RunID: e.run.ID, NodeID: node, Provider: p.Name(), SessionID: id})
	if err != nil {
		e.x.Log.Warn("orchestrator.session_save_failed", zap.String("run_id", e.run.ID), zap.Error(err))
	}
}
