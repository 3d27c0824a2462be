// Command bot is Threadflow's process: it reads the configuration, wires the store, the HTTP
// endpoints and (as they land) the orchestrator and the chat adapters together, and runs them until
// SIGINT or SIGTERM. It is the only package that knows every other one.
//
// Usage:
//
//	bot [serve] [flags]   run the bot (the default)
//	bot migrate [flags]   apply database migrations and exit
//	bot help              list commands and settings
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	tfcommands "threadflow/commands"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal starts a graceful shutdown, a second one kills the process at once.
	context.AfterFunc(ctx, stop)
	if len(os.Args) > 1 && os.Args[1] == "workflow" {
		oneProcessor()
	}
	os.Exit(exitCode(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)))
}

// oneProcessor runs a `bot workflow` command's Go code on one processor unless GOMAXPROCS is set.
// The command drives one run: its own work is a few hundred microseconds of bookkeeping between
// node processes, which use every core whatever this says. With a processor per core, each
// hand-off between its goroutines (a node's end, the recorder, the scheduler) woke an idle thread,
// and threads spinning for work took CPU from the node's own process: one processor measured 5-10%
// less per node of a chain (BENCHMARKS.md, "The command path, session 5"). Only the real process
// does this; tests call run in a process of their own.
func oneProcessor() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}

// invocation is what a command gets from the process: the environment and where to write.
type invocation struct {
	getenv func(string) string
	stdout io.Writer
	stderr io.Writer
	host   hostInfo
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, inv invocation, args []string) error
}

func commands() []command {
	return []command{
		{"serve", "run the bot until SIGINT or SIGTERM (the default)", serve},
		{"chat", "talk to the bot from the terminal: bot chat [--conversation ID] [--user ID] [MESSAGE...]", chat},
		{"workflow", "list, validate, run, inspect (status, logs), answer and cancel workflows: bot workflow help", workflowCmd},
		{"audit", "list who started, approved, rejected, resumed or cancelled which run: bot audit [--since 24h] [--json]", auditCmd},
		{"prune", "delete the runs past RETENTION and RETENTION_UNFINISHED now, with their events and files: bot prune [--dry-run]", pruneCmd},
		{"migrate", "apply pending database migrations and exit", migrate},
		{"version", "print the module version, VCS revision and Go version of this binary", version},
		{"help", "show this help", func(_ context.Context, inv invocation, _ []string) error {
			printHelp(inv.stdout)
			return nil
		}},
	}
}

// run is the testable entry point: it dispatches args to a command and reports a failure as one
// line on stderr, with any secret from the environment scrubbed out. exitCode maps the result.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	inv := invocation{getenv: getenv, stdout: stdout, stderr: stderr, host: currentHost(getenv, stderr)}
	err := subcommand(ctx, inv, args)
	if errors.Is(err, flag.ErrHelp) {
		printHelp(stdout)
		return nil
	}
	if err != nil {
		msg := strings.ReplaceAll(scrub(err.Error(), envSecrets(getenv)), "\n", "; ")
		fmt.Fprintf(stderr, "threadflow: %s\n", msg)
	}
	return err
}

// subcommand picks the command named by the first argument; without one, or when the first
// argument is a flag, it serves.
func subcommand(ctx context.Context, inv invocation, args []string) error {
	name, rest := "serve", args
	switch {
	case len(args) > 0 && isHelpFlag(args[0]):
		name, rest = "help", nil
	case len(args) > 0 && !strings.HasPrefix(args[0], "-"):
		name, rest = args[0], args[1:]
	}
	names := make([]string, 0, 4)
	for _, c := range commands() {
		if c.name == name {
			return c.run(ctx, inv, rest)
		}
		names = append(names, c.name)
	}
	return &usageError{fmt.Sprintf("unknown command %q%s; use one of %s (bot help describes them)", name, didYouMean(name, names), strings.Join(names, ", "))}
}

func isHelpFlag(a string) bool {
	return a == "-h" || a == "-help" || a == "--help"
}

// currentHost describes this process and its user for defaults that depend on them.
func currentHost(getenv func(string) string, stderr io.Writer) hostInfo {
	name, err := os.Hostname()
	if err != nil || name == "" {
		name = "threadflow"
	}
	return hostInfo{stderrTTY: isTerminal(stderr), hostname: name, pid: os.Getpid(), defaultHome: defaultHome(getenv)}
}

// envSecrets lists the secret values in the environment, to scrub from messages.
func envSecrets(getenv func(string) string) []string { return secretValues(getenv) }

// didYouMean is ` (did you mean "x"?)` when name is a plausible typo of one of names, else "".
func didYouMean(name string, names []string) string {
	if near := tfcommands.Closest(name, names, 1); len(near) == 1 {
		return fmt.Sprintf(" (did you mean %q?)", near[0])
	}
	return ""
}

// flagProblem is a flag parsing error of fs as one line, with a "did you mean" when the flag is a
// plausible typo of one fs defines, written with dashes as the command's help writes its flags.
func flagProblem(fs *flag.FlagSet, err error, dashes string) string {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "flag provided but not defined: -") // the flag package's wording
	if !ok {
		return msg
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if near := tfcommands.Closest(name, names, 1); len(near) == 1 {
		return fmt.Sprintf("%s (did you mean %q?)", msg, dashes+near[0])
	}
	return msg
}
