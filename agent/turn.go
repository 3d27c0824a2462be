package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"threadflow/childenv"
	"threadflow/db"
	"threadflow/proctag"
)

// Errors wrapped in Error.Err when the CLI ended without saying why.
var (
	errNoResult   = errors.New("the CLI exited without a result")
	errTurnFailed = errors.New("the CLI reported a failed turn")
)

// Why a turn was stopped by this package rather than by the caller (context causes).
var (
	errTurnTimeout = errors.New("turn timeout")
	errIdle        = errors.New("idle timeout")
	errHopeless    = errors.New("the CLI reported a failure it would only retry")
)

// cli is what differs between providers: the command line and the event stream. Claude and Codex
// fill it in; everything else about running a turn is shared.
type cli struct {
	name    string // provider name, as in New
	display string // product name for chat messages
	envVar  string // where the binary is configured
	bin     string
	log     *zap.Logger
	cfg     Config
	args    func(Request) []string
	stream  func(Request) stream
	// loginHint says how to log this CLI in on the bot host.
	loginHint string
	// connectHint says what decides where this CLI connects.
	connectHint string
}

// stream parses the stdout events of one turn. line says what an event means for the turn's
// watchdogs.
type stream interface {
	line([]byte) signal
	verdict() verdict
}

// signal is what one output event means for a running turn.
type signal int

const (
	// progress: the turn is alive; the idle watchdog starts over.
	progress signal = iota
	// retrying: the CLI reports it is retrying on its own (reconnecting, API retry). That is not
	// progress: a CLI that only ever retries is stopped by the idle watchdog.
	retrying
	// hopeless: the event already proves the turn cannot succeed; the CLI is stopped at once
	// instead of being left to retry.
	hopeless
)

// verdict is what a finished event stream says about the turn.
type verdict struct {
	ok   bool   // the CLI reported a successful turn
	text string // the final assistant text
	// structured is the structured answer the CLI reported (claude's structured_output, codex's
	// final message when it is JSON); read only when the request had an OutputSchema.
	structured json.RawMessage
	refusal    string // why the CLI refused a structured answer the model gave (claude)
	sessionID  string // the session the CLI reported; may be the new id of a failed resume
	failure    string // the CLI's own error text
	// staleOnResume: the stream's shape alone proves a resumed session is gone, whatever the text.
	staleOnResume bool
	signals       signals  // the structured fields of the failure
	lastError     string   // the last error the CLI reported, even one it meant to retry
	denied        []string // tools the CLI refused to use under the turn's permissions
	// usage is what the turn used, as the CLI reported it; nil when it ended without saying.
	usage *db.AgentUsageData
	// budgetStop: the CLI stopped at the spending cap it was given.
	budgetStop bool
}

// run executes one turn and logs its outcome without the prompt or the reply.
func (c cli) run(ctx context.Context, r Request) (Result, error) {
	log := c.log
	if log == nil {
		log = zap.NewNop()
	}
	log = log.With(zap.String("provider", c.name), zap.String("model", r.Model),
		zap.Bool("resume", r.SessionID != ""))
	start := time.Now()
	res, err := c.turn(ctx, r)
	if err != nil {
		log.Warn("agent.turn_failed", zap.String("class", string(ClassOf(err))), zap.Error(err),
			zap.Duration("took", time.Since(start)))
		return Result{}, err
	}
	log.Info("agent.turn_completed", zap.String("session_id", res.SessionID), zap.Any("usage", res.Usage),
		zap.Int("reply_bytes", len(res.Text)), zap.Duration("took", time.Since(start)))
	return res, nil
}

func (c cli) turn(ctx context.Context, r Request) (Result, error) {
	r.Permissions = c.cfg.permissions(r.Permissions)
	if err := c.check(r); err != nil {
		return Result{}, err
	}
	s := c.stream(r)
	ex, cause := c.watch(ctx, r, s)
	return c.decide(r, s.verdict(), ex, cause)
}

// decide turns what a finished (or stopped) CLI said into the turn's result, with its usage.
func (c cli) decide(r Request, v verdict, ex exit, cause error) (Result, error) {
	res, err := c.outcome(r, v, ex, cause)
	var ae *Error
	switch {
	case err == nil && v.usage == nil:
		res.Usage = c.checkedUsage(unknownUsage)
	case err == nil:
		res.Usage = c.checkedUsage(*v.usage)
	case v.usage != nil && errors.As(err, &ae):
		u := c.checkedUsage(*v.usage)
		ae.Usage = &u
	}
	return res, err
}

// outcome is the turn's result or error.
func (c cli) outcome(r Request, v verdict, ex exit, cause error) (Result, error) {
	switch {
	case cause == errHopeless:
		return Result{}, c.failure(r, v, ex)
	case cause != nil:
		return Result{}, c.stopped(cause, r, v)
	case isStartError(ex.err):
		return Result{}, c.startFailure(ex.err)
	case v.ok && len(v.denied) > 0:
		return Result{}, c.denied(r, v)
	case v.ok:
		structured, err := c.structuredAnswer(r, v)
		if err != nil {
			return Result{}, err
		}
		return Result{Text: v.text, SessionID: cmp.Or(v.sessionID, r.SessionID), Structured: structured}, nil
	}
	return Result{}, c.failure(r, v, ex)
}

// watch runs the CLI under the turn's time limits and returns how it exited and, when it was
// stopped before it finished, why (a context cause). Every process the turn started is dead when
// it returns, whichever session or process group it moved to: they all carry the turn's tag.
func (c cli) watch(ctx context.Context, r Request, s stream) (exit, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ctx, stop := context.WithTimeoutCause(ctx, c.cfg.timeout(), errTurnTimeout)
	defer stop()
	idle := r.idle(c.cfg)
	watchdog := time.AfterFunc(idle, func() { cancel(errIdle) })
	defer watchdog.Stop()
	onLine := func(b []byte) {
		switch s.line(b) {
		case progress:
			watchdog.Reset(idle)
		case hopeless:
			cancel(errHopeless)
		}
	}
	tag := proctag.NewTurn()
	env := childenv.Environ(append(r.Env, proctag.Entry(proctag.TurnEnv, tag))...)
	ex := process{bin: c.binary(), args: c.args(r), dir: r.Dir, env: env, stdin: r.Prompt, onLine: onLine}.run(ctx)
	watchdog.Stop() // the CLI is done: a late firing must not recast its end as a hang
	if killed := proctag.KillAll(proctag.TurnEnv, tag); len(killed) > 0 {
		c.logger().Warn("agent.processes_killed", zap.String("provider", c.name), zap.Ints("pids", killed))
	}
	if ctx.Err() == nil {
		return ex, nil
	}
	cause := context.Cause(ctx)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && !errors.Is(cause, context.DeadlineExceeded) {
		cause = fmt.Errorf("%w: %w", context.DeadlineExceeded, cause) // the caller's own deadline
	}
	return ex, cause
}

func (c cli) logger() *zap.Logger {
	if c.log == nil {
		return zap.NewNop()
	}
	return c.log
}

func (c cli) binary() string { return cmp.Or(c.bin, c.name) }

// sessionIDPattern is what a session id may look like before it is put on a command line: the CLIs
// issue UUIDs, and anything starting with a dash would be read as a flag.
var sessionIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]*$`)

// modelPattern keeps a model name from smuggling flags or whitespace onto the command line.
var modelPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/\[\]-]*$`)

// maxArgLen bounds a session id or model name. It is checked apart from the patterns: `{0,199}` in
// a pattern compiles to 199 nested copies, 3 ms and 400 kB at every start of the bot.
const maxArgLen = 200

// validArg reports whether s matches p within maxArgLen characters (the patterns are ASCII only).
func validArg(p *regexp.Regexp, s string) bool { return len(s) <= maxArgLen && p.MatchString(s) }

// check rejects a request that cannot be run, before starting anything.
func (c cli) check(r Request) error {
	if r.Permissions == PermFull && !c.cfg.AllowFull {
		return &Error{Class: db.ClassInfra,
			Msg:  fmt.Sprintf("permissions: full is refused on this bot: it lets %s run anything on the host without a sandbox", c.display),
			Hint: fmt.Sprintf("the operator may allow it with %s=true, or give the node permissions: edit", AllowFullEnv)}
	}
	if r.Model != "" && !validArg(modelPattern, r.Model) {
		return &Error{Class: db.ClassPermanent,
			Msg: fmt.Sprintf("model %q is not a valid model name: use letters, digits, '.', '-', ':' or '/'", detail(r.Model))}
	}
	if r.SessionID != "" && !validArg(sessionIDPattern, r.SessionID) {
		// An id the CLI could never have issued cannot be resumed: a fresh session is the way on.
		return &Error{Class: db.ClassStaleSession,
			Msg: fmt.Sprintf("the stored %s session id is malformed; a fresh session is needed", c.display)}
	}
	if r.Dir != "" {
		info, err := os.Stat(r.Dir)
		if err == nil && !info.IsDir() {
			err = fmt.Errorf("%s: %w", r.Dir, syscall.ENOTDIR)
		}
		if err != nil {
			return &Error{Class: db.ClassInfra, Err: err,
				Msg: fmt.Sprintf("the working directory %s does not exist or is not a directory", r.Dir)}
		}
	}
	return nil
}

// isStartError reports whether the process never ran: anything from Run that is neither an exit
// status nor the wait-delay notice.
func isStartError(err error) bool {
	var exitErr *exec.ExitError
	return err != nil && !errors.As(err, &exitErr) && !errors.Is(err, exec.ErrWaitDelay)
}

func (c cli) startFailure(err error) *Error {
	e := &Error{Class: ClassOf(err), Err: fmt.Errorf("start %s: %w", c.name, err)}
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		e.Msg = fmt.Sprintf("the %s CLI (%s) was not found: install it on the bot host or set %s to its path",
			c.display, c.binary(), c.envVar)
	case errors.Is(err, fs.ErrPermission):
		e.Msg = fmt.Sprintf("the %s CLI (%s) cannot be executed (permission denied): fix its file mode or set %s",
			c.display, c.binary(), c.envVar)
	default:
		e.Msg = fmt.Sprintf("the %s CLI could not start: %s", c.display, detail(err.Error()))
	}
	return e
}

// stopped is a turn stopped before it finished: by its time limits or by the caller (cancel,
// shutdown, lease loss, a node timeout). The CLI's last error is kept: "timed out" alone hides that
// it was retrying a rejected key.
func (c cli) stopped(cause error, r Request, v verdict) *Error {
	session := cmp.Or(v.sessionID, r.SessionID)
	last := detail(redact(v.lastError, r.Prompt))
	e := &Error{Class: db.ClassPermanent, SessionID: session, LastError: last, Err: fmt.Errorf("%s turn: %w", c.name, cause)}
	switch {
	case errors.Is(cause, errTurnTimeout):
		e.Class, e.Msg = db.ClassTransient, fmt.Sprintf("the %s turn took longer than %s (%s)", c.display, c.cfg.timeout(), TimeoutEnv)
	case errors.Is(cause, errIdle):
		e.Class, e.Msg = db.ClassTransient, fmt.Sprintf("%s printed nothing for %s and was stopped (%s, or the node's idle_timeout)", c.display, r.idle(c.cfg), IdleTimeoutEnv)
	case errors.Is(cause, context.DeadlineExceeded):
		e.Class, e.Msg = db.ClassTransient, fmt.Sprintf("the %s turn timed out", c.display)
	default:
		e.Msg = fmt.Sprintf("the %s turn was cancelled", c.display)
		return e
	}
	if last != "" {
		// What the CLI was struggling with decides: a rejected key needs a person, not a retry.
		if class, why := classify(signals{status: v.signals.status, kind: v.signals.kind, text: v.lastError}, r.SessionID != "", false); class == db.ClassInfra {
			e.Class, e.Hint = class, c.hint(why)
		}
		e.Msg += "; the CLI's last error: " + last
	}
	return e
}

// denied fails a turn that ran but was refused tools it tried to use: its work is not done, however
// the CLI reported it.
func (c cli) denied(r Request, v verdict) *Error {
	tools := strings.Join(v.denied, ", ")
	return &Error{Class: db.ClassPermanent, SessionID: cmp.Or(v.sessionID, r.SessionID),
		Msg:  fmt.Sprintf("%s was refused permission to use %s under permissions: %s", c.display, tools, r.Permissions),
		Hint: "give the node the permissions it needs (permissions: edit or full), or change its prompt",
		Err:  fmt.Errorf("%s: permission denials: %s", c.name, tools)}
}

// failure classifies a turn that ran but did not succeed, from the stream and the CLI's stderr.
func (c cli) failure(r Request, v verdict, ex exit) *Error {
	resumed := r.SessionID != ""
	stderr := strings.TrimSpace(redact(ex.stderr, r.Prompt))
	failure := redact(v.failure, r.Prompt)
	sig := v.signals
	sig.text = failure + "\n" + stderr
	class, why := classify(sig, resumed, v.staleOnResume)
	e := &Error{Class: class, Err: c.cause(ex.err, failure, stderr), Hint: c.hint(why), BudgetStop: v.budgetStop}
	if class != db.ClassStaleSession {
		e.SessionID = cmp.Or(v.sessionID, r.SessionID)
	}
	e.Msg = c.message(class, why, quoted(failure, stderr, e.Err))
	if v.budgetStop {
		e.Msg = fmt.Sprintf("%s stopped at the spending cap it was given (%s)", c.display, quoted(failure, stderr, e.Err))
	}
	return e
}

// quoted is the CLI's own words for a failure, for the message. Codex's retry notices are skipped
// when the turn's verdict follows them.
func quoted(failure, stderr string, err error) string {
	return cmp.Or(detail(failure), detail(lastLine(stderr)), detail(err.Error()))
}

// hint says what a person can do about a failure of this kind.
func (c cli) hint(why reason) string {
	switch why {
	case reasonLogin:
		return c.loginHint
	case reasonConnection:
		return "check that the bot host can reach the API (network, proxy, " + c.connectHint + ")"
	case reasonSetup:
		return fmt.Sprintf("fix the %s CLI's setup on the bot host (%s selects the binary)", c.display, c.envVar)
	}
	return ""
}

// cause is the loggable detail of a failure: exit status, what the CLI reported, its stderr tail.
func (c cli) cause(exitErr error, failure, stderr string) error {
	err := exitErr
	switch {
	case err != nil:
	case failure != "":
		err = errTurnFailed
	default:
		err = errNoResult
	}
	err = fmt.Errorf("%s: %w", c.name, err)
	if failure != "" {
		err = fmt.Errorf("%w; reported %q", err, failure)
	}
	if stderr != "" {
		err = fmt.Errorf("%w; stderr %q", err, stderr)
	}
	return err
}

func (c cli) message(class db.ErrorClass, why reason, said string) string {
	switch {
	case class == db.ClassStaleSession:
		return fmt.Sprintf("the %s session expired or no longer exists; a fresh session is needed", c.display)
	case class == db.ClassTransient:
		return fmt.Sprintf("%s is temporarily unavailable (%s); retrying later may help", c.display, said)
	case why == reasonLogin:
		return fmt.Sprintf("%s is not logged in or its credentials were refused (%s)", c.display, said)
	case why == reasonConnection:
		return fmt.Sprintf("%s cannot reach its API (%s)", c.display, said)
	case class == db.ClassInfra:
		return fmt.Sprintf("%s cannot run (%s): check that it is installed and logged in on the bot host (%s selects the binary)",
			c.display, said, c.envVar)
	}
	return fmt.Sprintf("%s failed: %s", c.display, said)
}

// lastLine returns the last non-blank line of s: CLIs print their fatal error last.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
