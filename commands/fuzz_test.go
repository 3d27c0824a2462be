package commands

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
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

// FuzzClassify checks that Classify never panics and that an answer is never read from a question
// or from text too long to be one. testdata/fuzz/FuzzClassify holds what earlier runs found: an
// answer padded with whitespace, which is an answer (the property was wrong, not Classify).
func FuzzClassify(f *testing.F) {
	for _, s := range []string{"yes", "no", "lgtm 🚀", "👍🏽", ":+1:", "no idea", "yes?", "::", ":", "👎👍", "don’t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Classify(s)
		if got == IntentUnclear {
			return
		}
		// Surrounding whitespace is not part of an answer ("   y   " is "y"); what is left must be short.
		if n := utf8.RuneCountInString(strings.ToLower(strings.TrimSpace(s))); n > maxClassifyRunes {
			t.Fatalf("Classify(%d runes once trimmed) = %v, want unclear for long text", n, got)
		}
		for _, r := range s {
			if r == '?' {
				t.Fatalf("Classify(%q) = %v, want unclear for a question", s, got)
			}
		}
	})
}
