package commands

import (
	"reflect"
	"strings"
	"testing"
	"unicode"
)

// FuzzParse checks that Parse never panics and that every Command it returns has a canonical text
// that parses back to the same Command.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`/workflow run deploy`, `/workflow run fix "task B" --force`, `/workflow run fix -- --force --`,
		`workflow run fix ‘a’ “b” \x`, `/workflow approve 7k2m9x don't`, `/workflow reject 7K2M9X4Q1C "no"`,
		`/status`, `/reset`, `/help`, `/workflow run "unclosed`, "/workflow run fix \"a\\`b\\$c\"",
		"/workflow run x a\\", "/workflow run x \"\\\\\" '\\'", "/workflow approve 7k2m9x \u00a0 x \u0085",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(s)
		if err != nil {
			return
		}
		back, err := Parse(c.String())
		if err != nil {
			t.Fatalf("Parse(%q) = %#v, but its String %q does not parse: %v", s, c, c.String(), err)
		}
		if !reflect.DeepEqual(back, c) {
			t.Fatalf("Parse(%q) = %#v; Parse(String()=%q) = %#v", s, c, c.String(), back)
		}
	})
}

// FuzzClassify checks the property that makes gates safe to answer in plain words: no reply that
// contains a negation or a question mark ever approves, a note is always a piece of the reply, and
// nothing panics. The negation rule here is written out independently of the classifier's tables:
// a word (letters and apostrophes) that is one of the English negations or ends in n't.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{"yes", "no", "lgtm 🚀", "👍🏽", ":+1:", "no idea", "yes?", "::", ":", "👎👍", "don’t",
		"lgtm, ship it", "lgtm, not123", "ok, no-op", "nah, fix the tests first", "ship it but not on friday",
		"👍 NOT", "approve\u00a0not", "lgtm, isn’t it", "yes. never mind"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a := ReadAnswer(s)
		if a.Intent == IntentUnclear {
			if a.Why == "" || a.Note != "" {
				t.Fatalf("ReadAnswer(%q) = %+v: an unclear reply needs a reason and carries no note", s, a)
			}
			return
		}
		if !strings.Contains(s, a.Note) {
			t.Fatalf("ReadAnswer(%q) note %q is not part of the reply", s, a.Note)
		}
		if a.Intent != IntentApprove {
			return
		}
		if strings.ContainsAny(s, "?？") {
			t.Fatalf("ReadAnswer(%q) approves a question", s)
		}
		if w := englishNegation(s); w != "" {
			t.Fatalf("ReadAnswer(%q) approves a reply containing the negation %q", s, w)
		}
	})
}

// englishNegation is the fuzz property's own definition of a negation.
func englishNegation(s string) string {
	s = strings.ToLower(strings.ReplaceAll(s, "\u2019", "'"))
	words := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' })
	for _, w := range words {
		w = strings.Trim(w, "'")
		switch w {
		case "no", "not", "never", "nope", "nah", "nothing", "none", "nobody", "nor", "neither", "without", "cannot", "dont":
			return w
		}
		if strings.HasSuffix(w, "n't") {
			return w
		}
	}
	return ""
}
