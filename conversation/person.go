package conversation

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxNameRunes bounds a display name in messages and in the database. Discord names are at most
// 32 characters and Slack's 80, so real names are never cut; what a user controls stays bounded.
const maxNameRunes = 80

// Person is someone a message names: who started a run, who answered its gate.
type Person struct {
	ID   string // platform-qualified: "discord:4567"; what authorization uses
	Name string // the platform's display name, "" when it gave none; for messages only
	// Roles are the person's Discord role ids as Discord sent them with this very message or click:
	// a `discord:role:<id>` in a list of people is checked against them when the person acts.
	Roles []string
	Via   string // how the adapter knows who ID is, when the platform's own word is not it (ViaSignIn); recorded for the audit
}

// ViaSignIn is Person.Via of someone signed in to the dashboard: a web page acting as a Slack or
// Discord id because the person proved it to that platform's sign-in.
const ViaSignIn = "signed-in"

// Label is how every message names a person: the display name their platform gave, else their
// platform-qualified id ("console:local", "slack:U123"). A self-declared name (the terminal's
// --user, the web chat's name) is no display name: it is the id's own part, and "local" on the web
// is not "local" in a terminal, so it is shown with its platform. An unqualified label is therefore
// always a name a platform gave. It is one line and bounded (DisplayName).
func (p Person) Label() string {
	n := DisplayName(p.Name)
	if _, own, ok := strings.Cut(p.ID, ":"); n == "" || (ok && n == own) {
		return p.ID
	}
	return n
}

// Span is the person's Label as untrusted text: a display name is chosen by its owner, so every
// adapter escapes its markup and mentions like any other user text.
func (p Person) Span() Span { return U(p.Label()) }

// DisplayName returns a display name as it may be stored and shown: control, format (bidi
// overrides, zero-width) and line-breaking characters become spaces, runs of spaces one space,
// and at most maxNameRunes runes are kept, "…" marking a cut. A name can thus never start a new
// line of a message, reorder the text around it, or grow a message or row without bound.
func DisplayName(name string) string {
	if !utf8.ValidString(name) {
		name = strings.ToValidUTF8(name, "")
	}
	clean := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.In(r, unicode.Zl, unicode.Zp) {
			return ' '
		}
		return r
	}, name)
	return Preview(clean, maxNameRunes)
}
