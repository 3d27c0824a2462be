package commands

import "strings"

// usages lists every command in the order Help shows them, with a one-line description.
var usages = []struct {
	kind  Kind
	usage string
	what  string
}{
	{KindRun, "/workflow run <name> [--force] [args...]", "start a run; --force starts fresh even when an earlier run of it failed or is paused"},
	{KindResume, "/workflow resume <run-id> [--fresh-workspace]", "continue a failed or paused run where it stopped; --fresh-workspace runs one whose workspace cannot be recreated again from its first node, in a new one"},
	{KindAbandon, "/workflow abandon <run-id>", "discard a failed, paused or queued run for good"},
	{KindApprove, "/workflow approve <run-id> [comment]", "approve the gate a run is waiting at"},
	{KindReject, "/workflow reject <run-id> [reason]", "reject the gate a run is waiting at; the run is cancelled"},
	{KindStatus, "/workflow status [run-id]", "show one run, or the runs of this conversation"},
	{KindList, "/workflow list", "list the workflows you can run"},
	{KindCancel, "/workflow cancel [run-id]", "stop a running run (the latest in this thread when no id is given)"},
	{KindHelp, "/workflow help", "show this help"},
	{KindReset, "/reset", "forget this conversation's AI session and start the next turn fresh"},
}

// Usage returns the usage line of k, or the overview of all subcommands when k is unknown or empty.
func Usage(k Kind) string {
	for _, u := range usages {
		if u.kind == k {
			return u.usage
		}
	}
	return "/workflow run|resume|abandon|approve|reject|status|list|cancel|help ..."
}

// Help returns the help text: every command with one line each. Run ids may be shortened to their
// first characters.
func Help() string {
	var b strings.Builder
	b.WriteString("Commands:\n")
	for _, u := range usages {
		b.WriteString(u.usage + " - " + u.what + "\n")
	}
	b.WriteString("A run id may be shortened to its first 6 characters. Quote arguments that contain spaces.")
	return b.String()
}
