package main

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// printHelp lists the commands and every setting with its flag, default and meaning.
func printHelp(w io.Writer) {
	fmt.Fprint(w, "Threadflow runs YAML-defined workflows from Slack and Discord.\n\n"+
		"Usage: threadflow [command] [flags]\n\nCommands:\n")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, c := range commands() {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	_ = tw.Flush() // w is the terminal; a failed help print has nowhere to be reported

	fmt.Fprint(w, "\nSettings (environment variable, flag of serve and migrate, default).\n"+
		"Secrets have no flag, because command lines are visible to other users:\n\n")
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, s := range settings {
		flagName := "(secret)"
		if !s.isSecret() {
			flagName = "-" + s.flagName()
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", s.env, flagName, s.shownDefault(), s.usage)
	}
	_ = tw.Flush()
}
