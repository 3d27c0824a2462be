// Package commands turns the text a person typed in chat into a typed Command, and classifies short
// natural-language answers in a paused run's thread as approvals or rejections. It is pure: no I/O, no
// platform knowledge. Quoting follows the shell (after typographic quotes are normalised), `--force`
// may appear anywhere in the arguments of `run`, and Command.String is the canonical text that parses
// back to the same Command, so the bot can suggest commands that work when pasted.
package commands

import (
	"strconv"
	"strings"
)

// Kind names a command.
type Kind string

// Command kinds.
const (
	KindRun     Kind = "run"
	KindResume  Kind = "resume"
	KindAbandon Kind = "abandon"
	KindApprove Kind = "approve"
	KindReject  Kind = "reject"
	KindStatus  Kind = "status"
	KindList    Kind = "list"
	KindCancel  Kind = "cancel"
	KindHelp    Kind = "help"
	KindReset   Kind = "reset"
)

// Command is one parsed chat command.
type Command struct {
	Kind     Kind
	Workflow string   // run: the workflow name
	Args     []string // run: the workflow arguments, --force removed; nil when there are none
	Force    bool     // run: start fresh even when a failed or paused run of the workflow exists
	RunID    string   // a full run id or a prefix of at least db.MinPrefix characters, lower case
	Text     string   // approve: the comment; reject: the reason. Kept as typed, trimmed.
	Reply    int64    // approve, reject: answer with the text of the reply recorded as this run event (--reply N)
	// FreshWorkspace: resume a run whose workspace cannot be recreated (lost, or its
	// WORKSPACE_REMOTE did not answer) from its first node, in a new workspace (--fresh-workspace).
	FreshWorkspace bool
}

// ArgsText is the arguments as the workflow sees them in $ARGUMENTS: joined by single spaces.
func (c Command) ArgsText() string { return strings.Join(c.Args, " ") }

// String returns the canonical text of c: Parse(c.String()) returns c for every Command Parse returns.
// Suggested commands shown to users (resume, abandon, run --force) are built with it.
func (c Command) String() string {
	switch c.Kind {
	case KindReset:
		return "/reset"
	case KindRun:
		return c.runString()
	}
	parts := []string{"/workflow", string(c.Kind)}
	if c.RunID != "" {
		parts = append(parts, c.RunID)
	}
	if c.FreshWorkspace {
		parts = append(parts, optFresh)
	}
	if c.Reply > 0 {
		parts = append(parts, optReply, strconv.FormatInt(c.Reply, 10))
	} else if c.Text != "" {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, " ")
}

func (c Command) runString() string {
	parts := []string{"/workflow", "run", Quote(c.Workflow)}
	if c.Force {
		parts = append(parts, optForce)
	}
	if needsEndOfOptions(c.Args) {
		parts = append(parts, optEnd)
	}
	for _, a := range c.Args {
		parts = append(parts, Quote(a))
	}
	return strings.Join(parts, " ")
}

// needsEndOfOptions reports whether an argument would be read as an option unless `--` precedes it.
func needsEndOfOptions(args []string) bool {
	for _, a := range args {
		if isForce(a) || a == optEnd {
			return true
		}
	}
	return false
}
