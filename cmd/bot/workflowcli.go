package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"threadflow/adapters/console"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator"
	"threadflow/orchestrator/dispatch"
	"threadflow/orchestrator/execution"
	"threadflow/orchestrator/reporting"
	"threadflow/workflow"
)

// Exit statuses of `bot workflow` commands that drive a run, so scripts can branch on them
// (README.md, "Exit statuses"). 2 is a usage error (errUsage).
const (
	exitFailed    = 1
	exitPaused    = 3
	exitCancelled = 4 // cancelled by someone or something else while the command waited
	exitBusy      = 5 // refused: another run holds the workflow's concurrency group (when_busy: refuse)
)

// runStopError reports a run that stopped without completing; its exit status says how.
type runStopError struct {
	code int
	msg  string
}

func (e *runStopError) Error() string { return e.msg }

// ExitCode is the process exit status for the error.
func (e *runStopError) ExitCode() int { return e.code }

const workflowUsage = `usage: bot workflow list [--json]
       bot workflow validate [FILE...]
       bot workflow run [--user NAME] NAME [ARGS...] [--input NAME=VALUE...]
       bot workflow runs [--json] [--limit N] [--state STATE] [--workflow NAME]
       bot workflow triggers [--json]
       bot workflow status [--json] RUN_ID
       bot workflow logs RUN_ID [NODE]
       bot workflow resume|approve|reject [--user NAME] RUN_ID [TEXT]
       bot workflow cancel|abandon [--user NAME] RUN_ID
--user acts as console:NAME instead of console:local (a gate may refuse its own requester)`

// usageOf is the line of workflowUsage that shows sub, for errors about that command alone.
func usageOf(sub string) string {
	for _, line := range strings.Split(workflowUsage, "\n") {
		words := strings.Fields(strings.TrimPrefix(line, "usage:"))
		if len(words) > 2 && words[0] == "bot" && slices.Contains(strings.Split(words[2], "|"), sub) {
			return "usage: " + strings.Join(words, " ")
		}
	}
	return workflowUsage
}

// workflowSubcommands are the commands of bot workflow, for "did you mean".
var workflowSubcommands = []string{"help", "list", "validate", "run", "runs", "triggers", "status", "logs", "resume", "approve", "reject", "cancel", "abandon"}

// workflowHelp is `bot workflow help`: the usage and what each command does and exits with.
const workflowHelp = `bot workflow runs workflows from a shell, on the bot's database (THREADFLOW_HOME or DATABASE_URL).

` + workflowUsage + `

  list      the workflows you can run (bundled, then WORKFLOWS_DIR and $THREADFLOW_HOME/workflows)
  validate  check workflow files (without FILE, every file the bot reads); prints file:line:col
            for every problem, exit 1 if any
  run       start a run and wait until it stops
  runs      the newest runs of every conversation, newest first (--limit 20 by default)
  triggers  every schedule, webhook and GitHub trigger: what fires it, where its runs talk, its
            next fire and its latest fires with their runs
  status    one run: its state, every node with its state and duration, the last error
  logs      the output of a node's latest attempt (every node's without NODE); while the node
            runs, or after its run was cancelled, as far as it got, marked partial
  resume, approve, reject
            answer or continue a run, then wait until it stops
  cancel, abandon
            stop a run: queued, running, paused or failed (as chat's /workflow cancel)

run, resume, approve and reject exit 0 when the run completed, 1 when it failed and 3 when it
paused (printing the command that continues it, or at a gate that does not let you approve, who may
and how you may reject it), and 4 when someone else cancelled it while they waited (printing who);
reject, cancel and abandon exit 0 when they cancelled it themselves; 2 means the command itself was
wrong.
Run ids may be shortened to a unique prefix of at least 6 characters.
--json prints list, runs, triggers and status as JSON (the fields are described in README.md).
Logs stay at warn unless LOG_LEVEL says otherwise.`

// workflowCmd is `bot workflow ...`: the same operations as chat, on the same database, from a
// shell. Commands that drive a run wait until it stops and exit 0 (completed), 1 (failed) or 3
// (paused, printing how it continues).
func workflowCmd(ctx context.Context, inv invocation, args []string) error {
	if len(args) == 0 {
		return &usageError{"bot workflow needs a command such as list, run or status; bot workflow help lists them"}
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "help", "-h", "-help", "--help":
		fmt.Fprintln(inv.stdout, workflowHelp)
		return nil
	case "validate":
		if len(rest) == 0 {
			return validateAll(inv)
		}
		return validateFiles(inv.stdout, rest)
	case "list", "runs", "triggers", "run", "status", "logs", "resume", "approve", "reject", "cancel", "abandon":
	default:
		return &usageError{fmt.Sprintf("unknown workflow command %q%s; bot workflow help lists them", sub, didYouMean(sub, workflowSubcommands))}
	}
	user, rest, err := cliUser(sub, rest)
	if err != nil {
		return err
	}
	var out outputFlags
	if sub == "list" || sub == "runs" || sub == "triggers" || sub == "status" || sub == "logs" {
		if out, rest, err = parseOutputFlags(sub, rest); err != nil {
			return err
		}
	}
	cli, err := openCLI(ctx, inv)
	if err != nil {
		return err
	}
	defer cli.close()
	cli.user = user
	switch sub {
	case "list":
		if out.json {
			return cli.listJSON(ctx, inv.stdout)
		}
		return cli.list(ctx, inv.stdout)
	case "runs":
		if len(rest) > 0 {
			return &usageError{"usage: bot workflow runs [--json] [--limit N] [--state STATE] [--workflow NAME]"}
		}
		return cli.runs(ctx, inv.stdout, out)
	case "triggers":
		if len(rest) > 0 {
			return &usageError{usageOf("triggers")}
		}
		return cli.triggers(ctx, inv.stdout, out.json)
	case "run":
		return cli.runWorkflow(ctx, rest)
	case "status":
		return cli.status(ctx, inv.stdout, rest, out.json)
	case "logs":
		return cli.logs(ctx, inv.stdout, inv.stderr, rest)
	}
	return cli.act(ctx, sub, rest)
}

// cliUser reads --user of the commands that act on runs, which may come before their arguments.
func cliUser(sub string, args []string) (string, []string, error) {
	user := dispatch.LocalConsoleUser
	switch sub {
	case "run", "resume", "approve", "reject", "cancel", "abandon":
	default:
		return user, args, nil
	}
	fs := flag.NewFlagSet("workflow "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	name := fs.String("user", "", "")
	if err := fs.Parse(args); err != nil {
		return "", nil, &usageError{fmt.Sprintf("bot workflow %s: %s; %s", sub, flagProblem(fs, err, "--"), usageOf(sub))}
	}
	if *name != "" {
		var err error
		if user, err = consoleUser(*name); err != nil {
			return "", nil, err
		}
	}
	return user, fs.Args(), nil
}

// validateFiles prints every problem of every file and fails when there is one.
func validateFiles(w io.Writer, files []string) error {
	bad := 0
	var errs workflow.Errors
	for _, f := range files {
		wf, err := workflow.ParseFile(f)
		if err != nil {
			bad++
			fmt.Fprintln(w, err.Error())
			errs = append(errs, asWorkflowErrors(err, f)...)
			continue
		}
		fmt.Fprintf(w, "%s: ok (workflow %s, %d nodes)\n", f, wf.Name, len(wf.Nodes))
	}
	if s := workflow.SummarizeErrors(len(files)-bad, errs); s.Refused > 0 {
		fmt.Fprintln(w, s)
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d files are not valid workflows", bad, len(files))
	}
	return nil
}

// asWorkflowErrors keeps a file's problems, or one problem for a file that could not be read.
func asWorkflowErrors(err error, file string) workflow.Errors {
	var es workflow.Errors
	if errors.As(err, &es) {
		return es
	}
	return workflow.Errors{{File: file, Msg: err.Error()}}
}

// validateAll checks every workflow file the bot reads (bundled, $THREADFLOW_HOME/workflows,
// WORKFLOWS_DIR), prints every problem and fails when there is one. The other terminal commands
// print the problems only when they change, and otherwise point here.
func validateAll(inv invocation) error {
	cfg, log, err := setup(inv, "workflow", nil)
	if err != nil {
		return err
	}
	cat, errs := workflow.Discover(cfg.Home, cfg.WorkflowsDirs)
	for _, e := range errs {
		fmt.Fprintln(inv.stdout, e.Error())
	}
	if _, err := os.Stat(cfg.Home); err == nil { // a check creates no home
		if err := newProblemsShown(cfg.Home).record(errs); err != nil {
			log.Warn("workflow.problems_shown_unwritable", zap.Error(err))
		}
	}
	if s := workflow.Summarize(cat, errs); s.Refused > 0 { // files of another tool's dialect (docs/archon.md)
		fmt.Fprintln(inv.stdout, s)
	}
	switch n := brokenFiles(errs); n {
	case 0:
	case 1:
		return errors.New("1 workflow file is not valid and is left out until fixed")
	default:
		return fmt.Errorf("%d workflow files are not valid and are left out until fixed", n)
	}
	fmt.Fprintf(inv.stdout, "Every workflow file is valid: %d workflows (bot workflow list shows them).\n", len(cat.List()))
	return nil
}

// cliSession is the orchestrator on the bot's database with the terminal as its chat.
type cliSession struct {
	cfg    Config
	store  db.Store
	engine *orchestrator.Engine
	at     conversation.Address
	user   string // who acts: console:local unless --user says otherwise
	stop   func()
}

func openCLI(ctx context.Context, inv invocation) (*cliSession, error) {
	cfg, log, st, err := openLocal(ctx, inv, "workflow", nil)
	if err != nil {
		return nil, err
	}
	return &cliSession{cfg: cfg, store: st, engine: terminalEngine(cfg, log, st, inv.stdout, inv.stderr), at: conversation.Address{Platform: console.Platform, ChannelID: "cli"},
		stop: func() {}}, nil
}

func (c *cliSession) close() {
	c.stop()
	_ = c.store.Close()
}

// startEngine runs the workers until close.
func (c *cliSession) startEngine(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); c.engine.Run(ctx) }()
	c.stop = func() { cancel(); <-done }
}

func (c *cliSession) list(ctx context.Context, w io.Writer) error {
	cat := c.engine.Dispatcher.Catalogs.Catalog()
	for _, wf := range c.runnable(ctx, cat) {
		fmt.Fprintf(w, "%-20s %-10s %s\n", wf.Name, cat.Origin(wf.Name), firstLineOf(wf.Description))
	}
	return nil
}

// runnable are the workflows of cat the terminal's user may run from the terminal, by each
// workflow's access (dispatch.CheckAccess), as /workflow list shows a person in chat.
func (c *cliSession) runnable(ctx context.Context, cat *workflow.Catalog) []*workflow.Workflow {
	var out []*workflow.Workflow
	for _, wf := range cat.List() {
		if c.engine.Dispatcher.CheckAccess(ctx, wf, c.at, conversation.Person{ID: c.user}) == nil {
			out = append(out, wf)
		}
	}
	return out
}

func firstLineOf(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// runWorkflow starts a fresh run (the CLI asks explicitly, so there is no resume prompt) and waits.
func (c *cliSession) runWorkflow(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return &usageError{"bot workflow run needs a workflow NAME; bot workflow list shows them"}
	}
	cat := c.engine.Dispatcher.Catalogs.Catalog()
	wf, ok := cat.Get(args[0])
	if probs := cat.Problems(args[0]); !ok && len(probs) > 0 {
		return &usageError{fmt.Sprintf("workflow %q cannot run: its file is not valid: %s; fix the file (bot workflow validate %s checks it)", args[0], probs.Error(), probs[0].File)}
	}
	if !ok {
		return &usageError{fmt.Sprintf("no workflow named %q%s; bot workflow list shows them", args[0], didYouMean(args[0], cat.Names()))}
	}
	words, err := inputFlags(args[1:])
	if err != nil {
		return err
	}
	argText := strings.Join(words, " ")
	if err := c.engine.Dispatcher.Limits.CheckArgs(argText); err != nil { // before anything is written
		return &usageError{err.Error()}
	}
	inputs, err := wf.RunInputs(words)
	if err != nil {
		return &usageError{err.Error() + "\nusage: " + strings.TrimPrefix(dispatch.Usage(wf), "/workflow run ")}
	}
	if err := c.engine.Dispatcher.CheckAccess(ctx, wf, c.at, conversation.Person{ID: c.user}); err != nil {
		return &usageError{err.Error()}
	}
	if err := wf.CheckArgs(argText); err != nil {
		return &usageError{err.Error()}
	}
	// Each invocation talks in a conversation of its own, so two scripts running workflows at once
	// never execute (and print) each other's runs.
	c.at.ChannelID = "cli-" + db.NewRunID()
	if err := attach(ctx, c.engine, c.at.ConversationID()); err != nil {
		return err
	}
	c.startEngine(ctx)
	run, err := c.engine.Dispatcher.StartRun(ctx, c.at, conversation.Person{ID: c.user}, wf, argText, inputs)
	var busy *db.GroupBusyError
	if errors.As(err, &busy) {
		holder, err := c.store.GetRun(ctx, busy.Holder)
		if err != nil {
			holder = db.Run{} // named by its id alone
		}
		t, _ := reporting.GroupBusyText(wf.Name, busy, holder)
		return &runStopError{code: exitBusy, msg: console.Render(t)}
	}
	if err != nil {
		return err
	}
	return c.waitStop(ctx, run.ID)
}

// inputFlags takes `--input NAME=VALUE` (also `--input=NAME=VALUE`) out of a run's arguments,
// anywhere after the workflow's name, and returns every argument as RunInputs reads them: the
// pairs of the flags are name=value words like any other.
func inputFlags(args []string) ([]string, error) {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--input" || a == "-input":
			if i+1 == len(args) || !strings.Contains(args[i+1], "=") {
				return nil, &usageError{"--input needs NAME=VALUE, such as --input version=v1.2; " + usageOf("run")}
			}
			i++
			out = append(out, args[i])
		case strings.HasPrefix(a, "--input=") || strings.HasPrefix(a, "-input="):
			_, pair, _ := strings.Cut(a, "=")
			if !strings.Contains(pair, "=") {
				return nil, &usageError{"--input needs NAME=VALUE, such as --input version=v1.2; " + usageOf("run")}
			}
			out = append(out, pair)
		default:
			out = append(out, a)
		}
	}
	return out, nil
}

func (c *cliSession) status(ctx context.Context, w io.Writer, args []string, asJSON bool) error {
	if len(args) != 1 {
		return &usageError{"usage: bot workflow status [--json] RUN_ID (bot workflow runs lists the ids)"}
	}
	run, err := c.findRun(ctx, args[0])
	if err != nil {
		return err
	}
	if asJSON {
		return c.statusJSON(ctx, w, run)
	}
	t, err := reporting.RunTimeline(ctx, c.store, run, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintln(w, console.Render(t))
	return nil
}

// logs prints the output of a node's latest attempt, streamed from its file: all of it once the
// attempt ended, as far as it got while it runs or after the run stopped it (marked partial on
// stderr, so stdout stays the output itself). Without NODE, every node's, each under a header line.
func (c *cliSession) logs(ctx context.Context, w, errw io.Writer, args []string) error {
	if len(args) < 1 || len(args) > 2 {
		return &usageError{"usage: bot workflow logs RUN_ID [NODE]"}
	}
	run, err := c.findRun(ctx, args[0])
	if err != nil {
		return err
	}
	events, err := c.store.Events(ctx, run.ID)
	if err != nil {
		return err
	}
	if len(args) == 2 {
		ref, err := execution.NodeOutputFile(run, events, args[1])
		var missing *execution.OutputMissingError
		if errors.As(err, &missing) {
			msg := missing.Error() + fmt.Sprintf("; `bot workflow status %s` shows its nodes", run.ID)
			if missing.Unknown {
				msg = missing.Error() + didYouMean(args[1], missing.Nodes)
			}
			return &usageError{msg}
		}
		if err != nil {
			return err
		}
		if ref.Partial != "" {
			fmt.Fprintf(errw, "partial output of attempt %d of %s (%d bytes): %s\n", ref.Attempt, ref.Node, ref.Bytes, ref.Partial)
		}
		_, err = copyFile(w, ref.File)
		return err
	}
	for _, ref := range execution.OutputFiles(run, events) {
		state := ref.State
		if ref.Partial != "" {
			state = "partial: " + ref.Partial
		}
		fmt.Fprintf(w, "==> %s (attempt %d, %s, %d bytes) <==\n", ref.Node, ref.Attempt, state, ref.Bytes)
		last, err := copyFile(w, ref.File)
		if err != nil {
			return err
		}
		if last != 0 && last != '\n' { // the next header starts a line of its own
			fmt.Fprintln(w)
		}
	}
	return nil
}

// copyFile streams a file to w through a small buffer, however large, and returns the last byte it
// wrote (0 for an empty file). To a terminal it passes without escape sequences and other controls,
// which a node's output could use to rewrite the screen, the window title or the clipboard; to a
// pipe or a file, unchanged.
func copyFile(w io.Writer, path string) (byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("read the output file: %w", err)
	}
	defer f.Close()
	lw := &lastByteWriter{w: w}
	if isTerminal(w) {
		err = console.CopyToTerminal(lw, f)
	} else {
		_, err = io.Copy(lw, f)
	}
	return lw.last, err
}

// lastByteWriter remembers the last byte written through it.
type lastByteWriter struct {
	w    io.Writer
	last byte
}

func (l *lastByteWriter) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	if n > 0 {
		l.last = p[n-1]
	}
	return n, err
}

// act sends the equivalent chat command as the local console user, then waits for the run.
func (c *cliSession) act(ctx context.Context, verb string, args []string) error {
	if len(args) == 0 {
		return &usageError{usageOf(verb)}
	}
	run, err := c.findRun(ctx, args[0])
	if err != nil {
		return err
	}
	// This terminal continues the run it answers or resumes, and prints it, while it waits: a run
	// of another terminal's conversation becomes this one's too.
	if platform, channel, thread, ok := db.ParseConversationKey(run.ConversationID); ok && platform == console.Platform {
		if err := attach(ctx, c.engine, run.ConversationID); err != nil {
			return err
		}
		// Answer in the run's own conversation, as a person typing there would: the bot then says
		// what happened once, instead of confirming elsewhere too.
		c.at = conversation.Address{Platform: platform, ChannelID: channel, ThreadID: thread}
	}
	c.startEngine(ctx)
	text := strings.TrimSpace("/workflow " + verb + " " + run.ID + " " + strings.Join(args[1:], " "))
	c.engine.Dispatcher.Handle(ctx, conversation.Message{Address: c.at, UserID: c.user, Text: text, Direct: true})
	return c.waitStop(ctx, run.ID)
}

// findRun resolves a typed run id by the rule chat follows too (dispatch.FindRun).
func (c *cliSession) findRun(ctx context.Context, typed string) (db.Run, error) {
	run, err := dispatch.FindRun(ctx, c.store, typed)
	var miss *dispatch.RunLookupError
	if errors.As(err, &miss) {
		if len(miss.Matches) == 0 && miss.Invalid == "" {
			return db.Run{}, &usageError{miss.Error() + "; bot workflow runs lists the runs"}
		}
		return db.Run{}, &usageError{miss.Error()}
	}
	return run, err
}

// waitStop waits until the run is no longer queued or running and maps its status to the exit.
// This process's own executions wake it the moment they end; the slow poll covers a run that
// another process executes (a server continuing a chat platform's run), which no notification
// reaches on SQLite.
func (c *cliSession) waitStop(ctx context.Context, id string) error {
	t := time.NewTicker(remoteRunPoll)
	defer t.Stop()
	for waited := false; ; waited = true {
		ended := c.engine.Workers.Ended()
		run, err := c.store.GetRun(ctx, id)
		if err != nil {
			return err
		}
		if run.Status == db.StatusCancelled && waited {
			return c.cancelledElsewhere(ctx, run)
		}
		if run.Status != db.StatusQueued && run.Status != db.StatusRunning {
			return c.stopResult(run)
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), fmt.Errorf("run %s is still %s; it continues in the bot", id, run.Status))
		case <-ended:
		case <-t.C:
		}
	}
}

// cancelledElsewhere ends the wait for a run that was cancelled after the command started waiting,
// so not by the command itself: from the dashboard, another terminal or a gate's timer. This
// terminal stops its part of the run at once (a node it executes would otherwise run on until it
// next writes) and says who stopped the run, from the run's events.
func (c *cliSession) cancelledElsewhere(ctx context.Context, run db.Run) error {
	c.engine.Workers.Stop(run.ID)
	msg := fmt.Sprintf("while this command waited, run %s was cancelled", run.ID)
	events, err := c.store.Events(ctx, run.ID)
	switch cn, ok := reporting.LastCancellation(events); {
	case err != nil: // the run stopped all the same
		msg += " (who cancelled it could not be read: " + err.Error() + ")"
	case ok:
		msg += " " + console.Render(cn.Cause())
	}
	return &runStopError{code: exitCancelled, msg: msg}
}

// stopResult is the exit of a command whose run stopped: nil when it completed, or when the
// command's own answer cancelled it (reject, abandon, cancel); for a run that paused, how to
// continue it.
func (c *cliSession) stopResult(run db.Run) error {
	switch run.Status {
	case db.StatusCompleted, db.StatusCancelled:
		return nil
	case db.StatusPaused:
		return &runStopError{code: exitPaused, msg: c.pausedHint(run)}
	}
	return &runStopError{code: exitFailed, msg: fmt.Sprintf("run %s failed; after fixing the cause: %s", run.ID, c.command("resume", run.ID))}
}

// pausedHint says how to continue a paused run, as far as the terminal's user may: a gate that
// does not let them approve (its requester, or someone it does not name) is not offered to them to
// approve, by the gate's own rules (reporting.GateOffer); they are told who may, and how to act
// as that person here.
func (c *cliSession) pausedHint(run db.Run) string {
	p := run.Meta.Pause
	if p == nil || !p.Kind.IsGate() {
		return fmt.Sprintf("run %s is paused; continue it with: %s", run.ID, c.command("resume", run.ID))
	}
	head := fmt.Sprintf("run %s is paused at gate %s", run.ID, p.Node)
	offer := c.engine.Dispatcher.Auth.GateOffer(run, c.user)
	if offer.MayApprove() {
		return fmt.Sprintf("%s; continue it with: %s (or reject it: %s)", head, c.command("approve", run.ID), c.command("reject", run.ID))
	}
	hint := head + ". " + offer.Instead(c.command("reject", run.ID)+" [REASON]").String()
	if name := otherConsoleName(offer); name != "" {
		hint += " To approve as someone else here: bot workflow approve --user " + name + " " + run.ID
	}
	return hint
}

// otherConsoleName is a name the terminal can approve the gate as: NAME when the gate names nobody
// (anyone but the refused person may), the first terminal user it names otherwise, or "" when it
// names none.
func otherConsoleName(offer reporting.GateOffer) string {
	p := offer.Policy()
	if !p.Restricted() {
		return "NAME"
	}
	for _, id := range offer.Approvers() {
		if name, ok := strings.CutPrefix(id, console.Platform+":"); ok {
			return name
		}
	}
	return ""
}

// command is the `bot workflow` command that does verb to run id as the terminal's user.
func (c *cliSession) command(verb, id string) string {
	if name, ok := strings.CutPrefix(c.user, console.Platform+":"); ok && c.user != dispatch.LocalConsoleUser {
		return "bot workflow " + verb + " --user " + name + " " + id
	}
	return "bot workflow " + verb + " " + id
}
