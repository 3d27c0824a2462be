package commands

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Intent is what a reply in a paused run's thread means.
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

// Answer is what ReadAnswer made of a reply at a gate.
type Answer struct {
	Intent Intent
	// Note is the text after the clear phrase, as typed: the approval's note or the rejection's
	// reason. Empty for a bare answer ("lgtm", "no 👎").
	Note string
	// Why says, for an unclear reply, what could not be decided, as a phrase that completes "I could
	// not tell whether that was a yes or a no: ...". It may quote a word of the reply.
	Why string
}

// maxAnswerRunes bounds what is read as an answer at all: a long message is a discussion, and a
// discussion is never an approval.
const maxAnswerRunes = 500

// Classify returns only the intent of ReadAnswer.
func Classify(text string) Intent { return ReadAnswer(text).Intent }

// ReadAnswer reads a reply to an approval gate conservatively. A clear approval or rejection
// (optionally with emoji that agree) is that answer; a clear phrase followed by more words is that
// answer with the words as its note or reason ("lgtm, ship it", "nah, fix the tests first").
// Everything else is unclear and resolves nothing: a question, a reply that mixes yes and no, an
// approval followed by a negation, a reservation or a condition ("lgtm but wait until monday"), or
// a reply that does not start with a clear answer ("I don't approve"). Misreading an objection as an
// approval is the worst outcome here; asking back is cheap.
func ReadAnswer(text string) Answer {
	s := strings.TrimSpace(text)
	switch {
	case s == "":
		return unclear("it is empty")
	case utf8.RuneCountInString(s) > maxAnswerRunes:
		return unclear("it is too long to read as a plain yes or no")
	case strings.ContainsAny(s, "?？¿"):
		return unclear("it asks a question")
	}
	toks := tokenize(s)
	i := skipNeutral(toks, 0)
	lead, end := matchLead(toks, i)
	if lead == nil {
		return unclear("it does not start with a clear yes or no")
	}
	if !lead.strong && !separated(toks[end:]) {
		// "no idea", "go away", "stop the deploy": a short word that leads into a sentence.
		return unclear("it does not start with a clear yes or no")
	}
	end, conflict := absorbVotes(toks, end, lead.intent)
	if conflict {
		return unclear("it says both yes and no")
	}
	rest := toks[end:]
	note := noteOf(s, rest)
	if why := contradiction(lead.intent, note, rest); why != "" {
		return unclear(why)
	}
	return Answer{Intent: lead.intent, Note: note}
}

func unclear(why string) Answer { return Answer{Intent: IntentUnclear, Why: why} }

// separated reports whether the words after a lead, if any, are set off from it by punctuation
// ("no, don't ship it"), as a short lead like "no" needs before more words.
func separated(after []rtoken) bool {
	for _, t := range after {
		switch t.kind {
		case tkPunct:
			return true
		case tkWord:
			return false
		}
	}
	return true // nothing but emoji follows
}

// skipNeutral skips decorations that carry no answer (🎉, :tada:) at position i.
func skipNeutral(toks []rtoken, i int) int {
	for i < len(toks) && toks[i].kind == tkEmoji && voteOf(toks[i].text) == IntentUnclear {
		i++
	}
	return i
}

// absorbVotes takes emoji and punctuation after the lead: agreeing votes and decorations are part
// of the answer ("lgtm 👍", "no!! 👎"); a disagreeing vote is a conflict.
func absorbVotes(toks []rtoken, i int, intent Intent) (int, bool) {
	end := i
	for j := i; j < len(toks); j++ {
		t := toks[j]
		if t.kind == tkWord {
			break
		}
		if t.kind == tkEmoji {
			if v := voteOf(t.text); v != IntentUnclear && v != intent {
				return j, true
			}
			end = j + 1
		}
	}
	return end, false
}

// noteOf is the text of the reply from the first word or emoji of rest on, as typed. Separators
// before it are dropped, and a rest that is only thanks or decoration is no note.
func noteOf(s string, rest []rtoken) string {
	for k, t := range rest {
		if t.kind == tkPunct {
			continue
		}
		if onlyCourtesy(rest[k:]) {
			return ""
		}
		return strings.TrimSpace(s[t.start:])
	}
	return ""
}

// onlyCourtesy reports whether toks say nothing but please and thanks, with punctuation and
// decoration: "yes, please" is a bare yes.
func onlyCourtesy(toks []rtoken) bool {
	for _, t := range toks {
		switch {
		case t.kind == tkPunct, t.kind == tkEmoji && voteOf(t.text) == IntentUnclear:
		case t.kind == tkWord && courtesy[t.text]:
		default:
			return false
		}
	}
	return true
}

// contradiction returns why the words after a clear answer make it unclear, or "".
func contradiction(intent Intent, note string, rest []rtoken) string {
	if note == "" {
		return ""
	}
	if looksLikeRunID(rest) {
		return "it names a run id; to answer another run use /workflow approve ID or /workflow reject ID"
	}
	if intent == IntentApprove {
		return approvalDoubt(note, rest)
	}
	return rejectionDoubt(rest)
}

// approvalDoubt finds what makes an approval with a note unclear: a negation anywhere, a word of
// reservation, condition or delay, or a vote the other way.
func approvalDoubt(note string, rest []rtoken) string {
	if w := Negation(note); w != "" {
		return "it also says \u201c" + w + "\u201d"
	}
	for _, t := range rest {
		switch {
		case t.kind == tkWord && reservations[t.text]:
			return "it adds \u201c" + t.text + "\u201d"
		case t.kind == tkEmoji && voteOf(t.text) == IntentReject:
			return "it says both yes and no"
		}
	}
	if p := findPhrase(rest, rejectLeads); p != "" {
		return "it says both yes and \u201c" + p + "\u201d"
	}
	return ""
}

// rejectionDoubt finds what makes a rejection with a reason unclear: a yes that nothing negates
// ("no, lgtm actually"), a vote for approval, or a change of mind.
func rejectionDoubt(rest []rtoken) string {
	for i, t := range rest {
		switch {
		case t.kind == tkEmoji && voteOf(t.text) == IntentApprove:
			return "it says both no and yes"
		case t.kind == tkWord && changeOfMind[t.text]:
			return "it adds \u201c" + t.text + "\u201d"
		case t.kind == tkWord && !negatedAt(rest, i):
			if p := phraseAt(rest, i, positive); p != "" {
				return "it says both no and \u201c" + p + "\u201d"
			}
		}
	}
	return ""
}

// negatedAt reports whether one of the three words before rest[i] negates it ("don't ship it").
func negatedAt(toks []rtoken, i int) bool {
	seen := 0
	for j := i - 1; j >= 0 && seen < 3; j-- {
		if toks[j].kind != tkWord {
			continue
		}
		seen++
		if Negation(toks[j].text) != "" {
			return true
		}
	}
	return false
}

// looksLikeRunID reports whether a word of toks could be a run id (6-10 characters of the run id
// alphabet with a digit): "approve 7k2m9x" in a run's thread may mean another run.
func looksLikeRunID(toks []rtoken) bool {
	for _, t := range toks {
		if t.kind != tkWord || len(t.text) < 6 || len(t.text) > 10 || !strings.ContainsAny(t.text, "0123456789") {
			continue
		}
		if strings.IndexFunc(t.text, func(r rune) bool { return !strings.ContainsRune(runIDAlphabet, r) }) < 0 {
			return true
		}
	}
	return false
}

// runIDAlphabet is the alphabet of run ids (db.NewRunID): Crockford base32 in lower case.
const runIDAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// Negation returns the first word of s that negates ("not", "don't", "never", "nein", "不"...), or
// "". Words are runs of letters and apostrophes, so "not123" and "no-op" are found too. This is the
// rule behind "a reply with a negation never approves".
func Negation(s string) string {
	s = strings.ToLower(strings.ReplaceAll(s, "\u2019", "'"))
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }) {
		w = strings.Trim(w, "'")
		if negations[w] || strings.HasSuffix(w, "n't") {
			return w
		}
		for _, n := range cjkNegations {
			if strings.Contains(w, n) {
				return n
			}
		}
	}
	return ""
}
