package commands

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"threadflow/db"
)

// Option words of `run`.
const (
	optForce = "--force"
	optEnd   = "--"
	optFresh = "--fresh-workspace" // resume only
)

// maxWorkflowName bounds a workflow name so a hostile message cannot make the bot echo or look up
// an arbitrarily long string.
const maxWorkflowName = 128

// ParseError is a user-facing parse failure. Msg never quotes what the user typed (it points at a
// column instead), so it can be shown as bot-authored text without risking mention or markup
// injection.
type ParseError struct {
	Msg   string // what was wrong and how to fix it
	Col   int    // 1-based rune column of the offending word; 0 when not tied to one
	Usage string // the usage line of the command, when known
}

func (e *ParseError) Error() string {
	if e.Usage == "" {
		return e.Msg
	}
	return e.Msg + "; usage: " + e.Usage
}

// IsCommand reports whether text is meant as a command: it starts with /workflow, /status, /reset or
// /help, or with "workflow <subcommand>" as people type it after mentioning the bot.
func IsCommand(text string) bool {
	f := strings.Fields(text)
	if len(f) == 0 {
		return false
	}
	switch strings.ToLower(f[0]) {
	case "/workflow", "/status", "/reset", "/help":
		return true
	case "workflow":
		return len(f) > 1
	}
	return false
}

// Parse parses one command. Mentions of the bot must already be stripped.
func Parse(text string) (Command, error) {
	sc := newScanner(text)
	head, ok, err := sc.next()
	if err != nil {
		return Command{}, err
	}
	if !ok {
		return Command{}, &ParseError{Msg: "the message is empty: type a command", Usage: Usage("")}
	}
	switch strings.ToLower(head.val) {
	case "/workflow", "workflow":
		return parseWorkflow(sc, head)
	case "/status":
		return parseOptionalID(sc, KindStatus)
	case "/reset":
		return parseNoArgs(sc, KindReset)
	case "/help":
		return parseNoArgs(sc, KindHelp)
	}
	return Command{}, &ParseError{Msg: "not a command: commands start with /workflow", Col: head.col, Usage: Usage("")}
}

func parseWorkflow(sc *scanner, head token) (Command, error) {
	sub, ok, err := sc.next()
	if err != nil {
		return Command{}, err
	}
	if !ok {
		return Command{}, &ParseError{Msg: "missing subcommand after /workflow", Col: head.col, Usage: Usage("")}
	}
	switch k := Kind(strings.ToLower(sub.val)); k {
	case KindRun:
		return parseRun(sc)
	case KindResume:
		return parseResume(sc)
	case KindAbandon:
		return parseRequiredID(sc, k, false)
	case KindApprove, KindReject:
		return parseRequiredID(sc, k, true)
	case KindStatus, KindCancel:
		return parseOptionalID(sc, k)
	case KindList, KindHelp:
		return parseNoArgs(sc, k)
	}
	return Command{}, &ParseError{
		Msg: fmt.Sprintf("unknown subcommand at column %d%s: use one of %s", sub.col, suggestSubcommand(sub.val), strings.Join(subcommandNames, ", ")),
		Col: sub.col, Usage: Usage(""),
	}
}

// isForce recognises --force, also as "—force"/"–force": phones turn a typed "--" into a dash.
func isForce(s string) bool { return s == optForce || s == "—force" || s == "–force" }

// parseRun reads `NAME [ARGS...]` with --force recognised anywhere until `--`.
func parseRun(sc *scanner) (Command, error) {
	c := Command{Kind: KindRun}
	options, named := true, false
	for {
		t, ok, err := sc.next()
		if err != nil {
			return Command{}, withUsage(err, KindRun)
		}
		switch {
		case !ok:
			if !named {
				return Command{}, &ParseError{Msg: "missing workflow name: say which workflow to run", Usage: Usage(KindRun)}
			}
			return c, nil
		case options && isForce(t.val):
			c.Force = true
		case options && t.val == optEnd:
			options = false
		case !named:
			if err := checkWorkflowName(t); err != nil {
				return Command{}, err
			}
			c.Workflow, named = t.val, true
		default:
			c.Args = append(c.Args, t.val)
		}
	}
}

func checkWorkflowName(t token) error {
	bad := func(why string) error {
		return &ParseError{Msg: fmt.Sprintf("the workflow name at column %d %s", t.col, why), Col: t.col, Usage: Usage(KindRun)}
	}
	switch {
	case t.val == "":
		return bad("is empty")
	case strings.HasPrefix(t.val, "-"):
		return bad("starts with \"-\": the only option is --force")
	case len(t.val) > maxWorkflowName:
		return bad(fmt.Sprintf("is longer than %d bytes", maxWorkflowName))
	case strings.IndexFunc(t.val, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0:
		return bad("contains spaces or control characters")
	}
	return nil
}

// parseRequiredID reads `ID`, then either the free text (approve, reject) or nothing.
func parseRequiredID(sc *scanner, k Kind, text bool) (Command, error) {
	t, ok, err := sc.next()
	if err != nil {
		return Command{}, withUsage(err, k)
	}
	if !ok {
		return Command{}, &ParseError{Msg: fmt.Sprintf("missing run id: say which run to %s", k), Usage: Usage(k)}
	}
	id, err := runID(t, k)
	if err != nil {
		return Command{}, err
	}
	c := Command{Kind: k, RunID: id}
	if text {
		return parseAnswerText(sc, c)
	}
	return c, noMore(sc, k)
}

// isFresh recognises --fresh-workspace, also with the dashes phones make of a typed "--".
func isFresh(s string) bool {
	s = strings.ToLower(s)
	return s == optFresh || s == "—fresh-workspace" || s == "–fresh-workspace"
}

// parseResume reads `RUN-ID [--fresh-workspace]`, the option on either side of the id.
func parseResume(sc *scanner) (Command, error) {
	c := Command{Kind: KindResume}
	for {
		t, ok, err := sc.next()
		switch {
		case err != nil:
			return Command{}, withUsage(err, KindResume)
		case !ok && c.RunID == "":
			return Command{}, &ParseError{Msg: "missing run id: say which run to resume", Usage: Usage(KindResume)}
		case !ok:
			return c, nil
		case isFresh(t.val) && !c.FreshWorkspace:
			c.FreshWorkspace = true
		case c.RunID == "" && !strings.HasPrefix(t.val, "-"):
			if c.RunID, err = runID(t, KindResume); err != nil {
				return Command{}, err
			}
		case strings.HasPrefix(t.val, "-"):
			return Command{}, &ParseError{Msg: fmt.Sprintf("unknown option at column %d: resume takes only %s", t.col, optFresh), Col: t.col, Usage: Usage(KindResume)}
		default:
			return Command{}, &ParseError{Msg: fmt.Sprintf("unexpected argument at column %d: remove it", t.col), Col: t.col, Usage: Usage(KindResume)}
		}
	}
}

// optReply makes an approval or rejection carry the text of a reply the bot quoted back (its
// "Approve with this note" and "Reject with this reason" buttons).
const optReply = "--reply"

// parseAnswerText reads the comment or reason of approve and reject: `--reply N`, or free text
// kept as typed (an apostrophe in "don't ship it" must not need escaping).
func parseAnswerText(sc *scanner, c Command) (Command, error) {
	at := sc.pos
	t, ok, err := sc.next()
	if err != nil || !ok || t.val != optReply {
		sc.pos = at
		c.Text = sc.rest()
		return c, nil
	}
	bad := &ParseError{Msg: fmt.Sprintf("%s at column %d takes the number of a reply the bot quoted, like %s 12", optReply, t.col, optReply),
		Col: t.col, Usage: Usage(c.Kind)}
	n, ok, err := sc.next()
	if err != nil || !ok {
		return Command{}, bad
	}
	seq, perr := strconv.ParseInt(n.val, 10, 64)
	if perr != nil || seq < 1 || strconv.FormatInt(seq, 10) != n.val {
		return Command{}, bad
	}
	c.Reply = seq
	return c, noMore(sc, c.Kind)
}

func parseOptionalID(sc *scanner, k Kind) (Command, error) {
	t, ok, err := sc.next()
	if err != nil {
		return Command{}, withUsage(err, k)
	}
	if !ok {
		return Command{Kind: k}, nil
	}
	id, err := runID(t, k)
	if err != nil {
		return Command{}, err
	}
	return Command{Kind: k, RunID: id}, noMore(sc, k)
}

func parseNoArgs(sc *scanner, k Kind) (Command, error) { return Command{Kind: k}, noMore(sc, k) }

func noMore(sc *scanner, k Kind) error {
	t, ok, err := sc.next()
	if err != nil {
		return withUsage(err, k)
	}
	if ok {
		return &ParseError{Msg: fmt.Sprintf("unexpected argument at column %d: remove it", t.col), Col: t.col, Usage: Usage(k)}
	}
	return nil
}

// runID validates a typed run id or prefix and returns it in lower case.
func runID(t token, k Kind) (string, error) {
	id := strings.ToLower(t.val)
	bad := func(why string) error {
		return &ParseError{Msg: fmt.Sprintf("the run id at column %d %s", t.col, why), Col: t.col, Usage: Usage(k)}
	}
	if why := db.RunIDProblem(id); why != "" { // the one rule, shared with the CLI (dispatch.FindRun)
		return "", bad(why)
	}
	return id, nil
}

// withUsage attaches the usage of k to a scanner error.
func withUsage(err error, k Kind) error {
	var pe *ParseError
	if errors.As(err, &pe) && pe.Usage == "" {
		pe.Usage = Usage(k)
	}
	return err
}

// subcommandNames are the /workflow subcommands in the order help lists them.
var subcommandNames = []string{"run", "resume", "abandon", "approve", "reject", "status", "list", "cancel", "help"}

// suggestSubcommand is ` (did you mean "run"?)` for a typo such as "rnu", else "". Only the known
// name is quoted back, so the user's text never reaches the reply through it.
func suggestSubcommand(typed string) string {
	if near := Closest(typed, subcommandNames, 1); len(near) == 1 {
		return fmt.Sprintf(" (did you mean %q?)", near[0])
	}
	return ""
}
