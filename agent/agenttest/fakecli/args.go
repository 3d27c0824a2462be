package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// invocation is what the fake understood from its command line.
type invocation struct {
	flavor string // claude or codex
	args   []string
	resume string // session id being resumed, "" for a fresh session
}

// parseInvocation decides the flavor (FAKE_AGENT_FLAVOR, else "exec" first means codex) and checks
// the arguments the real CLI needs for machine-readable output, so a provider that builds a wrong
// command line fails its tests.
func parseInvocation(args []string, flavor string) (invocation, error) {
	inv := invocation{flavor: flavor, args: args}
	if inv.flavor == "" {
		inv.flavor = "claude"
		if slices.Contains(args, "exec") {
			inv.flavor = "codex"
		}
	}
	var err error
	switch inv.flavor {
	case "claude":
		inv.resume, err = parseClaude(args)
	case "codex":
		inv.resume, err = parseCodex(args)
	default:
		err = fmt.Errorf("unknown flavor %q: use claude or codex", inv.flavor)
	}
	return inv, err
}

func parseClaude(args []string) (string, error) {
	if !slices.Contains(args, "-p") && !slices.Contains(args, "--print") {
		return "", errors.New("claude: -p is required for a non-interactive turn")
	}
	if flagValue(args, "--output-format") != "stream-json" {
		return "", errors.New("claude: --output-format stream-json is required")
	}
	if !slices.Contains(args, "--verbose") {
		return "", errors.New("claude: --verbose is required with stream-json in print mode")
	}
	if i := slices.Index(args, "-p"); i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
		return "", errors.New("claude: the prompt must come from stdin, not argv")
	}
	if !slices.Contains(claudeModes, flagValue(args, "--permission-mode")) {
		return "", fmt.Errorf("claude: --permission-mode must be one of %q", claudeModes)
	}
	return flagValue(args, "--resume"), nil
}

// codexValueFlags take a value, so the word after them is not a positional argument.
var codexValueFlags = []string{"--model", "-m", "-C", "--cd", "-c", "--config", "-s", "--sandbox",
	"-p", "--profile", "-o", "--output-last-message", "--output-schema", "-i", "--image"}

// claudeModes are the values claude 2.1 accepts for --permission-mode.
var claudeModes = []string{"acceptEdits", "auto", "bypassPermissions", "manual", "dontAsk", "plan"}

// codexGlobalValueFlags are the options codex takes before its subcommand.
var codexGlobalValueFlags = []string{"-a", "--ask-for-approval", "-c", "--config", "-m", "--model", "-s", "--sandbox"}

func parseCodex(args []string) (string, error) {
	for len(args) > 0 && args[0] != "exec" {
		if !slices.Contains(codexGlobalValueFlags, args[0]) || len(args) < 2 {
			return "", fmt.Errorf("codex: %q before exec is not a global option", args[0])
		}
		args = args[2:]
	}
	if len(args) == 0 {
		return "", errors.New("codex: the subcommand must be exec")
	}
	if v := flagValue(args, "--sandbox"); !slices.Contains([]string{"read-only", "workspace-write", "danger-full-access"}, v) {
		return "", fmt.Errorf("codex: exec --sandbox must be read-only, workspace-write or danger-full-access, got %q", v)
	}
	if !slices.Contains(args, "--json") {
		return "", errors.New("codex: --json is required")
	}
	var positional []string
	for i := 1; i < len(args); i++ {
		switch a := args[i]; {
		case slices.Contains(codexValueFlags, a):
			i++
		case a == "-" || !strings.HasPrefix(a, "-"):
			positional = append(positional, a)
		}
	}
	resume := ""
	if len(positional) > 0 && positional[0] == "resume" {
		if len(positional) < 2 {
			return "", errors.New("codex: resume needs a session id")
		}
		resume, positional = positional[1], positional[2:]
	}
	if !slices.Equal(positional, []string{"-"}) {
		return "", fmt.Errorf("codex: the prompt must come from stdin (a single '-' argument), got %q", positional)
	}
	return resume, nil
}

// flagValue returns the value of "--flag value" or "--flag=value", or "".
func flagValue(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
	}
	return ""
}
