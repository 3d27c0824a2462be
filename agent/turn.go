package agent

import (
	"cmp"
	"context"
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

	"threadflow/db"
)

// Errors wrapped in Error.Err when the CLI ended without saying why.
var (
	errNoResult   = errors.New("the CLI exited without a result")
	errTurnFailed = errors.New("the CLI reported a failed turn")
)

// cli is what differs between providers: the command line and the event stream. Claude and Codex
// fill it in; everything else about running a turn is shared.
type cli struct {
	name    string // provider name, as in New
	display string // product name for chat messages
	envVar  string // where the binary is configured
	bin     string
	log     *zap.Logger
	args    func(Request) []string
	stream  func() stream
}

// stream parses the stdout events of one turn.
type stream interface {
	line([]byte)
	verdict() verdict
}

// verdict is what a finished event stream says about the turn.
type verdict struct {
	ok        bool   // the CLI reported a successful turn
	text      string // the final assistant text
	sessionID string // the session the CLI reported; may be the new id of a failed resume
	failure   string // the CLI's own error text
	// staleOnResume: the stream's shape alone proves a resumed session is gone, whatever the text.
	staleOnResume bool
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
	log.Info("agent.turn_completed", zap.String("session_id", res.SessionID),
		zap.Int("reply_bytes", len(res.Text)), zap.Duration("took", time.Since(start)))
	return res, nil
}

func (c cli) turn(ctx context.Context, r Request) (Result, error) {
	if err := c.check(r); err != nil {
		return Result{}, err
	}
	s := c.stream()
	ex := process{bin: c.binary(), args: c.args(r), dir: r.Dir, env: r.Env, stdin: r.Prompt, onLine: s.line}.run(ctx)
	v := s.verdict()
	switch {
	case ctx.Err() != nil:
		return Result{}, c.cancelled(ctx.Err(), cmp.Or(v.sessionID, r.SessionID))
	case isStartError(ex.err):
		return Result{}, c.startFailure(ex.err)
	case v.ok:
		return Result{Text: v.text, SessionID: cmp.Or(v.sessionID, r.SessionID)}, nil
	}
	return Result{}, c.failure(r, v, ex)
}

func (c cli) binary() string { return cmp.Or(c.bin, c.name) }

// sessionIDPattern is what a session id may look like before it is put on a command line: the CLIs
// issue UUIDs, and anything starting with a dash would be read as a flag.
var sessionIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$`)

// modelPattern keeps a model name from smuggling flags or whitespace onto the command line.
var modelPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/\[\]-]{0,199}$`)

// check rejects a request that cannot be run, before starting anything.
func (c cli) check(r Request) error {
	if r.Model != "" && !modelPattern.MatchString(r.Model) {
		return &Error{Class: db.ClassPermanent,
			Msg: fmt.Sprintf("model %q is not a valid model name: use letters, digits, '.', '-', ':' or '/'", detail(r.Model))}
	}
	if r.SessionID != "" && !sessionIDPattern.MatchString(r.SessionID) {
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

func (c cli) cancelled(err error, session string) *Error {
	e := &Error{Class: db.ClassPermanent, SessionID: session, Err: fmt.Errorf("%s turn: %w", c.name, err),
		Msg: fmt.Sprintf("the %s turn was cancelled", c.display)}
	if errors.Is(err, context.DeadlineExceeded) {
		e.Class, e.Msg = db.ClassTransient, fmt.Sprintf("the %s turn timed out", c.display)
	}
	return e
}

// failure classifies a turn that ran but did not succeed, from the stream and the CLI's stderr.
func (c cli) failure(r Request, v verdict, ex exit) *Error {
	resumed := r.SessionID != ""
	stderr := strings.TrimSpace(redact(ex.stderr, r.Prompt))
	failure := redact(v.failure, r.Prompt)
	class := classifyText(failure+"\n"+stderr, resumed)
	if resumed && v.staleOnResume {
		class = db.ClassStaleSession
	}
	e := &Error{Class: class, Err: c.cause(ex.err, failure, stderr)}
	if class != db.ClassStaleSession {
		e.SessionID = cmp.Or(v.sessionID, r.SessionID)
	}
	why := cmp.Or(detail(failure), detail(lastLine(stderr)), detail(e.Err.Error()))
	e.Msg = c.message(class, why)
	return e
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

func (c cli) message(class db.ErrorClass, why string) string {
	switch class {
	case db.ClassStaleSession:
		return fmt.Sprintf("the %s session expired or no longer exists; a fresh session is needed", c.display)
	case db.ClassTransient:
		return fmt.Sprintf("%s is temporarily unavailable (%s); retrying later may help", c.display, why)
	case db.ClassInfra:
		return fmt.Sprintf("%s cannot run (%s): check that it is installed and logged in on the bot host (%s selects the binary)",
			c.display, why, c.envVar)
	}
	return fmt.Sprintf("%s failed: %s", c.display, why)
}

// lastLine returns the last non-blank line of s: CLIs print their fatal error last.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
