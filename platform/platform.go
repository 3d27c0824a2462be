// Package platform is the one list of the chat platforms Threadflow speaks: the prefix of their
// user ids and conversation keys, an example id for messages, the environment variables that
// hold their credentials, and the forms of their groups of people (People, in people.go). The workflow parser (approvers), the configuration (ALLOWED_USER_IDS,
// ADMIN_USER_IDS) and the agent (the environment it hides from CLIs) all read it, so a platform is
// added in one place.
//
// It is a table rather than something adapters fill at start-up: the workflow parser sits below
// the adapters and validates approver ids in processes that link none of them (`threadflow workflow
// check`, the workflow package's own tests), so the list must exist without them. Each adapter
// names its platform by the constant declared here.
package platform

import (
	"slices"
	"strings"
)

// The platform names: the prefix of a platform's user ids ("slack:U123") and conversation keys.
const (
	Slack   = "slack"
	Discord = "discord"
	Console = "console"
	Web     = "web"
	// WebRuns is the web chat's shared channel, where every run started there opens its thread
	// (and where a trigger posting to `web` talks).
	WebRuns = "#runs"
)

// Spec is what the bot knows of a platform before any adapter runs.
type Spec struct {
	Name        string
	ExampleUser string   // a user id on the platform without its prefix, for messages
	SecretEnv   []string // environment variables holding its credentials: never passed to child processes
}

// specs are the platforms, in the order messages list them.
var specs = []Spec{
	{Name: Slack, ExampleUser: "U0123ABCD", SecretEnv: []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"}},
	{Name: Discord, ExampleUser: "80351110224678912", SecretEnv: []string{"DISCORD_BOT_TOKEN"}},
	{Name: Console, ExampleUser: "alice"},
	{Name: Web, ExampleUser: "alice"},
}

// Names are the platform names.
func Names() []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}

// Known reports whether name is a platform.
func Known(name string) bool { return slices.Contains(Names(), name) }

// SplitUserID splits a platform-qualified user id into its platform and the id on it; ok is false
// when the platform is unknown or either part is empty. The id's own characters are the caller's
// to check: the rules differ between a configuration value and a workflow's approver list.
func SplitUserID(id string) (name, user string, ok bool) {
	name, user, ok = strings.Cut(id, ":")
	return name, user, ok && Known(name) && user != ""
}

// Examples lists an example user id of every platform, as a sentence would: "slack:U0123ABCD,
// discord:80351110224678912, console:alice or web:alice".
func Examples() string {
	ids := make([]string, len(specs))
	for i, s := range specs {
		ids[i] = s.Name + ":" + s.ExampleUser
	}
	last := len(ids) - 1
	return strings.Join(ids[:last], ", ") + " or " + ids[last]
}

// SecretEnv lists the environment variables that hold any platform's credentials.
func SecretEnv() []string {
	var out []string
	for _, s := range specs {
		out = append(out, s.SecretEnv...)
	}
	return out
}
