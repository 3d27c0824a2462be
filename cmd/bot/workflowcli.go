package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"threadflow/adapters/console"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator"
	"threadflow/workflow"
)

// Exit statuses of `bot workflow` commands that drive a run, so scripts can branch on them.
const (
	exitFailed = 1
	exitPaused = 3
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
       bot workflow validate FILE...
       bot workflow run [--user NAME] NAME [ARGS...]
       bot workflow runs [--json] [--limit N] [--state STATE] [--workflow NAME]
       bot workflow status [--json] RUN_ID
       bot workflow logs RUN_ID [NODE]
       bot workflow resume|approve|reject|abandon [--user NAME] RUN_ID [TEXT]
--user acts as console:NAME instead of console:local (a gate may refuse its own requester)`

// workflowSubcommands are the commands of bot workflow, for "did you mean".
var workflowSubcommands = []string{"help", "list", "validate", "run", "runs", "status", "logs", "resume", "approve", "reject", "abandon"}

// workflowHelp is `bot workflow help`: the usage and what each command does and exits with.
const workflowHelp = `bot workflow runs workflows from a shell, on the bot's database (THREADFLOW_HOME or DATABASE_URL).

` + workflowUsage + `

  list      the workflows you can run (bundled, then WORKFLOWS_DIR and $THREADFLOW_HOME/workflows)
  validate  check workflow files; prints file:line:col for every problem, exit 1 if any
  run       start a run and wait until it stops
  runs      the newest runs of every conversation, newest first (--limit 20 by default)
  status    one run: its state, every node with its state and duration, the last error
  logs      the full output of a node's latest attempt (every node's without NODE)
  resume, approve, reject, abandon
            answer or continue a run, then wait until it stops

run, resume, approve and reject exit 0 when the run completed, 1 when it failed and 3 when it
paused (printing the command that continues it); 2 means the command itself was wrong.
--json prints list, runs and status as JSON (the fields are described in README.md).
Logs stay at warn unless LOG_LEVEL says otherwise.`

// workflowCmd is `bot workflow ...`: the same operations as chat, on the same database, from a
// shell. Commands that drive a run wait until it stops and exit 0 (completed), 1 (failed) or 3
// (paused, printing the command that resumes it).
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
		return validateFiles(inv.stdout, rest)
	case "list", "runs", "run", "status", "logs", "resume", "approve", "reject", "abandon":
	default:
		return &usageError{fmt.Sprintf("unknown workflow command %q%s; bot workflow help lists them", sub, didYouMean(sub, workflowSubcommands))}
	}
	user, rest, err := cliUser(sub, rest)
	if err != nil {
		return err
	}
	var out outputFlags
	if sub == "list" || sub == "runs" || sub == "status" {
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
			return cli.listJSON(inv.stdout)
		}
		return cli.list(inv.stdout)
	case "runs":
		if len(rest) > 0 {
			return &usageError{"usage: bot workflow runs [--json] [--limit N] [--state STATE] [--workflow NAME]"}
		}
		return cli.runs(ctx, inv.stdout, out)
	case "run":
		return cli.runWorkflow(ctx, rest)
	case "status":
		return cli.status(ctx, inv.stdout, rest, out.json)
	case "logs":
		return cli.logs(ctx, inv.stdout, rest)
	}
	return cli.act(ctx, sub, rest)
}

// cliUser reads --user of the commands that act on runs, which may come before their arguments.
func cliUser(sub string, args []string) (string, []string, error) {
	user := orchestrator.LocalConsoleUser
	switch sub {
	case "run", "resume", "approve", "reject", "abandon":
	default:
		return user, args, nil
	}
	fs := flag.NewFlagSet("workflow "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	name := fs.String("user", "", "")
	if err := fs.Parse(args); err != nil {
		return "", nil, &usageError{fmt.Sprintf("bot workflow %s: %v\n%s", sub, err, workflowUsage)}
	}
	if *name != "" {
		user = consoleUser(*name)
	}
	return user, fs.Args(), nil
}

// validateFiles prints every problem of every file and fails when there is one.
func validateFiles(w io.Writer, files []string) error {
	if len(files) == 0 {
		return &usageError{"bot workflow validate needs at least one FILE"}
	}
	bad := 0
	for _, f := range files {
		wf, err := workflow.ParseFile(f)
		if err != nil {
			bad++
			fmt.Fprintln(w, err.Error())
			continue
		}
		fmt.Fprintf(w, "%s: ok (workflow %s, %d nodes)\n", f, wf.Name, len(wf.Nodes))
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d files are not valid workflows", bad, len(files))
	}
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

func (c *cliSession) list(w io.Writer) error {
	cat := c.engine.Dispatcher.Catalogs.Catalog()
	for _, wf := range cat.List() {
		fmt.Fprintf(w, "%-20s %-10s %s\n", wf.Name, cat.Origin(wf.Name), firstLineOf(wf.Description))
	}
	return nil
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
	argText := strings.Join(args[1:], " ")
	if err := c.engine.Dispatcher.Limits.CheckArgs(argText); err != nil { // before anything is written
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
	run, err := c.engine.Dispatcher.StartRun(ctx, c.at, conversation.Person{ID: c.user}, wf, argText)
	if err != nil {
		return err
	}
	return c.waitStop(ctx, run.ID)
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
	t, err := orchestrator.RunTimeline(ctx, c.store, run, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintln(w, console.Render(t))
	return nil
}

// logs prints the full output of a node's latest attempt, streamed from its file; without NODE,
// every node's, each under a header line.
func (c *cliSession) logs(ctx context.Context, w io.Writer, args []string) error {
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
		ref, err := orchestrator.NodeOutputFile(run, events, args[1])
		if errors.Is(err, orchestrator.ErrNoOutput) {
			return &usageError{fmt.Sprintf("node %q of run %s has no output yet; `bot workflow status %s` shows its nodes", args[1], run.ID, run.ID)}
		}
		if err != nil {
			return err
		}
		return copyFile(w, ref.File)
	}
	for _, ref := range orchestrator.OutputFiles(run, events) {
		fmt.Fprintf(w, "==> %s (attempt %d, %s, %d bytes) <==\n", ref.Node, ref.Attempt, ref.State, ref.Bytes)
		if err := copyFile(w, ref.File); err != nil {
			return err
		}
	}
	return nil
}

// copyFile streams a file to w; an output of any size passes through a small buffer. To a terminal
// it passes without escape sequences and other controls, which a node's output could use to
// rewrite the screen, the window title or the clipboard; to a pipe or a file, unchanged.
func copyFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read the output file: %w", err)
	}
	defer f.Close()
	if isTerminal(w) {
		return console.CopyToTerminal(w, f)
	}
	_, err = io.Copy(w, f)
	return err
}

// act sends the equivalent chat command as the local console user, then waits for the run.
func (c *cliSession) act(ctx context.Context, verb string, args []string) error {
	if len(args) == 0 {
		return &usageError{fmt.Sprintf("usage: bot workflow %s RUN_ID [TEXT]", verb)}
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

func (c *cliSession) findRun(ctx context.Context, prefix string) (db.Run, error) {
	runs, err := c.store.FindRunsByPrefix(ctx, strings.ToLower(prefix), 2)
	switch {
	case err != nil:
		return db.Run{}, err
	case len(runs) == 0:
		return db.Run{}, &usageError{fmt.Sprintf("no run id starts with %q", prefix)}
	case len(runs) > 1:
		return db.Run{}, &usageError{fmt.Sprintf("more than one run id starts with %q; give more of it", prefix)}
	}
	return runs[0], nil
}

// waitStop waits until the run is no longer queued or running and maps its status to the exit.
// This process's own executions wake it the moment they end; the slow poll covers a run that
// another process executes (a server continuing a chat platform's run), which no notification
// reaches on SQLite.
func (c *cliSession) waitStop(ctx context.Context, id string) error {
	t := time.NewTicker(remoteRunPoll)
	defer t.Stop()
	for {
		ended := c.engine.Workers.Ended()
		run, err := c.store.GetRun(ctx, id)
		if err != nil {
			return err
		}
		if run.Status != db.StatusQueued && run.Status != db.StatusRunning {
			return stopResult(run)
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), fmt.Errorf("run %s is still %s; it continues in the bot", id, run.Status))
		case <-ended:
		case <-t.C:
		}
	}
}

func stopResult(run db.Run) error {
	switch run.Status {
	case db.StatusCompleted, db.StatusCancelled:
		return nil
	case db.StatusPaused:
		return &runStopError{code: exitPaused, msg: fmt.Sprintf("run %s is paused; continue it with: bot workflow %s %s", run.ID, resumeVerb(run), run.ID)}
	}
	return &runStopError{code: exitFailed, msg: fmt.Sprintf("run %s failed; after fixing the cause: bot workflow resume %s", run.ID, run.ID)}
}

func resumeVerb(run db.Run) string {
	if run.Meta.Pause != nil && run.Meta.Pause.Kind.IsGate() {
		return "approve"
	}
	return "resume"
}
