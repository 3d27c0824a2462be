package commands

import (
	"strings"
	"unicode"
)

// Intent is what a short reply in a paused run's thread means.
type Intent int

// Intents. The zero value is IntentUnclear, so anything not recognised never acts.
const (
	IntentUnclear Intent = iota
	IntentApprove
	IntentReject
)

func (i Intent) String() string {
	switch i {
	case IntentApprove:
		return "approve"
	case IntentReject:
		return "reject"
	}
	return "unclear"
}

// maxClassifyRunes bounds what can count as an answer: only short messages are unambiguous.
const maxClassifyRunes = 40

// approvePhrases and rejectPhrases are compared with the whole normalised message, never searched
// for inside it: "no idea what this does" and "yes but change X" must stay unclear.
var approvePhrases = setOf(
	"approve", "approved", "approve it", "i approve", "lgtm", "looks good", "looks good to me",
	"yes", "y", "yep", "yeah", "yup", "yes please", "ok", "okay", "go", "go ahead", "go for it",
	"ship it", "proceed", "continue", "sure", "do it", "accept", "accepted", "confirm", "confirmed",
	"+1", "✅", "👍", "✔", "☑", "🆗", "🚢",
	":+1:", ":thumbsup:", ":white_check_mark:", ":heavy_check_mark:", ":ballot_box_with_check:", ":ok:", ":ship:",
)

var rejectPhrases = setOf(
	"reject", "rejected", "reject it", "i reject", "no", "n", "nope", "nah", "no thanks", "stop",
	"cancel", "abort", "deny", "denied", "decline", "declined", "do not", "don't", "dont", "halt",
	"-1", "👎", "❌", "✖", "🚫", "🛑", "⛔", "❎",
	":-1:", ":thumbsdown:", ":x:", ":no_entry:", ":no_entry_sign:", ":octagonal_sign:",
	":heavy_multiplication_x:", ":negative_squared_cross_mark:",
)

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// Classify reads a natural-language answer to an approval gate. Only a short message that is
// exactly one known answer (case-insensitive, trimmed, trailing punctuation tolerated), optionally
// decorated with emoji that agree with it, counts. Questions, mixed signals and sentences are
// IntentUnclear: acting on a misread answer is worse than asking again.
func Classify(text string) Intent {
	s := strings.ToLower(strings.TrimSpace(text))
	if s == "" || strings.ContainsRune(s, '?') || len([]rune(s)) > maxClassifyRunes {
		return IntentUnclear
	}
	words, emoji := splitEmoji(stripModifiers(s))
	return agree(append(emoji, phrases(words)...))
}

// phrases splits an answer into its comma- or semicolon-separated phrases, each of which must be a
// known answer on its own: "lgtm, ship it" approves, "yes, but change X" is unclear.
func phrases(words string) []string {
	if whole := normalisePhrase(words); whole == "" || approvePhrases[whole] || rejectPhrases[whole] {
		return nonEmpty(whole) // a known answer that happens to contain a comma ("yes, please")
	}
	var out []string
	for _, part := range strings.FieldsFunc(words, func(r rune) bool { return r == ',' || r == ';' }) {
		if p := normalisePhrase(part); p != "" {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return []string{words} // only punctuation: never an answer
	}
	return out
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// agree returns the intent all votes share; an unknown word or a conflict makes it unclear.
func agree(votes []string) Intent {
	got := IntentUnclear
	for _, v := range votes {
		var i Intent
		switch {
		case approvePhrases[v]:
			i = IntentApprove
		case rejectPhrases[v]:
			i = IntentReject
		case isNeutralEmoji(v):
			continue
		default:
			return IntentUnclear
		}
		if got != IntentUnclear && got != i {
			return IntentUnclear
		}
		got = i
	}
	return got
}

// stripModifiers removes emoji presentation selectors, skin tones and joiners, so 👍🏽 reads as 👍.
func stripModifiers(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\uFE0F' || r == '\uFE0E' || r == '\u200D' || (r >= 0x1F3FB && r <= 0x1F3FF) {
			return -1
		}
		return r
	}, s)
}

// splitEmoji separates symbol runes and :shortcodes: (each one vote) from the words around them.
func splitEmoji(s string) (words string, emoji []string) {
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if code, n := shortcode(rs[i:]); n > 0 {
			emoji = append(emoji, code)
			i += n - 1
			b.WriteRune(' ')
			continue
		}
		if unicode.IsSymbol(r) && r > unicode.MaxLatin1 {
			emoji = append(emoji, string(r))
			b.WriteRune(' ')
			continue
		}
		b.WriteRune(r)
	}
	return b.String(), emoji
}

// shortcode returns a Slack/Discord :name: at the start of rs and its length in runes.
func shortcode(rs []rune) (string, int) {
	if len(rs) < 3 || rs[0] != ':' {
		return "", 0
	}
	for i := 1; i < len(rs); i++ {
		r := rs[i]
		if r == ':' && i > 1 {
			return string(rs[:i+1]), i + 1
		}
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '+' || r == '-') {
			return "", 0
		}
	}
	return "", 0
}

// normalisePhrase drops trailing punctuation, turns commas into spaces, typographic apostrophes into
// ASCII ones and collapses whitespace.
// Leading punctuation is kept so a quote ("> yes") or a list item never reads as an answer.
func normalisePhrase(s string) string {
	s = strings.TrimRightFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) })
	s = strings.NewReplacer(",", " ", "’", "'").Replace(s)
	return strings.Join(strings.Fields(s), " ")
}

// isNeutralEmoji reports whether v is a decoration that carries no answer (🎉, 🚀, :tada:).
func isNeutralEmoji(v string) bool {
	rs := []rune(v)
	return (len(rs) == 1 && unicode.IsSymbol(rs[0])) || (len(rs) > 2 && rs[0] == ':' && rs[len(rs)-1] == ':')
}
