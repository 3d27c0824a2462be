package commands

import "strings"

// phrase is a known answer: a sequence of words compared rtoken by rtoken, never searched for
// inside a word. A strong phrase may be followed by more words directly ("lgtm ship it"); a short or
// common word needs punctuation first ("no, ..."), because "no idea" and "go away" are sentences.
type phrase struct {
	words  []string
	intent Intent
	strong bool
}

func (p phrase) String() string { return strings.Join(p.words, " ") }

// phrases builds a table from space-separated entries.
func phrases(intent Intent, strong bool, entries ...string) []phrase {
	out := make([]phrase, len(entries))
	for i, e := range entries {
		out[i] = phrase{words: strings.Fields(e), intent: intent, strong: strong}
	}
	return out
}

// approveLeads and rejectLeads are the answers a reply may start with. Other languages' common
// yes and no are here too; a clear word in any language still needs the rest of the reply to agree.
var (
	approveLeads = concat(
		phrases(IntentApprove, true, "approve", "approved", "approve it", "i approve", "lgtm", "looks good",
			"looks good to me", "looks great", "sounds good", "all good", "ship it", "go ahead", "go for it",
			"+1", "good to go", "green light", "accepted", "confirmed", "yes please", "let's go", "lets go",
			"let's do it", "lets do it", "let's ship it", "lets ship it", "sure thing", "please proceed"),
		phrases(IntentApprove, false, "yes", "y", "yep", "yeah", "yup", "ya", "yea", "ok", "okay", "k", "kk", "go",
			"ship", "send it", "merge it", "deploy it", "proceed", "continue", "sure", "do it", "accept", "confirm",
			"affirmative", "absolutely", "definitely", "of course",
			"ja", "jawohl", "genau", "oui", "d'accord", "si", "sí", "claro", "vale", "sim", "da", "да", "так", "tak",
			"evet", "はい", "是", "是的", "好", "好的", "可以", "네", "예"),
	)
	rejectLeads = concat(
		phrases(IntentReject, true, "reject", "rejected", "reject it", "i reject", "nope", "nah", "denied",
			"declined", "-1", "not approved", "no thanks", "no way", "don't ship it", "do not ship it",
			"don't ship", "do not ship", "don't merge", "do not merge", "don't deploy", "do not deploy",
			"don't approve", "do not approve", "don't approve it", "do not approve it", "cancel it", "abort it"),
		phrases(IntentReject, false, "no", "n", "stop", "cancel", "abort", "deny", "decline", "do not", "don't",
			"dont", "halt", "nein", "non", "nee", "nej", "nie", "niet", "нет", "ні", "não", "nao", "hayır",
			"いいえ", "不", "不行", "不要", "아니요", "아니"),
	)
	leads = concat(approveLeads, rejectLeads)
	// positive are the words that contradict a rejection unless negated: "no, lgtm" is unclear,
	// "no, don't ship it" is a rejection.
	positive = concat(approveLeads, phrases(IntentApprove, true, "fine", "good", "great", "works", "perfect"))
)

func concat(tables ...[]phrase) []phrase {
	var out []phrase
	for _, t := range tables {
		out = append(out, t...)
	}
	return out
}

// Emoji that vote, as characters and as Slack/Discord shortcodes; any other emoji is decoration.
var (
	approveEmoji = setOf("✅", "👍", "✔", "☑", "🆗", "🚢", "👌", "🟢", "🙆",
		":+1:", ":thumbsup:", ":white_check_mark:", ":heavy_check_mark:", ":ballot_box_with_check:", ":ok:",
		":ship:", ":ok_hand:", ":large_green_circle:", ":shipit:", ":ok_woman:")
	rejectEmoji = setOf("👎", "❌", "✖", "🚫", "🛑", "⛔", "❎", "🙅", "🔴",
		":-1:", ":thumbsdown:", ":x:", ":no_entry:", ":no_entry_sign:", ":octagonal_sign:",
		":heavy_multiplication_x:", ":negative_squared_cross_mark:", ":no_good:", ":red_circle:")
)

// voteOf returns the answer an emoji gives, IntentUnclear for decoration.
func voteOf(emoji string) Intent {
	switch {
	case approveEmoji[emoji]:
		return IntentApprove
	case rejectEmoji[emoji]:
		return IntentReject
	}
	return IntentUnclear
}

// negations are words that negate what follows or what was said; a reply containing one never
// approves. Contractions ending in n't are negations too (see Negation).
var negations = setOf("no", "not", "nope", "nah", "never", "nothing", "none", "nobody", "nowhere", "nor",
	"neither", "without", "cannot", "dont", "cant", "wont", "isnt", "arent", "wasnt", "werent", "doesnt",
	"didnt", "shouldnt", "wouldnt", "couldnt", "mustnt", "havent", "hasnt", "hadnt", "aint",
	"nein", "nicht", "kein", "keine", "keinen", "non", "ne", "pas", "nie", "nee", "nej", "niet", "ikke", "inte",
	"нет", "не", "ні", "não", "nao", "hayır")

// cjkNegations are negating characters of Chinese, Japanese and Korean, which are written without
// spaces and so are looked for inside words.
var cjkNegations = []string{"不", "没", "沒", "别", "別", "无", "無", "ない", "いいえ", "아니", "못"}

// reservations are words that, after an approval, add a condition, a delay or a doubt: "lgtm but
// wait until monday" and "ship it after the freeze" must be asked back, not approved.
var reservations = setOf("but", "however", "though", "although", "except", "unless", "if", "once", "until",
	"till", "after", "before", "when", "whenever", "only", "instead", "rather", "yet", "pending", "provided",
	"assuming", "wait", "waiting", "hold", "later", "tomorrow", "tonight", "monday", "tuesday", "wednesday",
	"thursday", "friday", "saturday", "sunday", "weekend", "first", "next", "soon", "maybe", "perhaps",
	"stop", "cancel", "abort", "revert", "rollback", "block", "blocked", "blocker", "blocking", "halt", "fix",
	"broken", "break", "breaks", "fail", "fails", "failing", "failed", "bug", "bugs", "wrong", "risky", "careful",
	"concern", "concerns", "worried", "problem", "problems", "reject", "rejected", "deny", "denied",
	"aber", "mais", "pero", "maar", "sauf", "außer", "но", "但", "但是", "でも", "하지만")

// changeOfMind are words that, after a rejection, take it back, soften it or ask only for a delay:
// "no, lgtm actually", "no, wait". A rejection cancels the run, so "not yet" must not be one.
var changeOfMind = setOf("but", "actually", "jk", "kidding", "nevermind", "nvm", "however", "although",
	"though", "unless", "except", "wait", "waiting", "hold", "later", "yet", "tomorrow", "maybe", "perhaps")

// courtesy words after an answer add nothing to it: "yes, please" is a bare yes.
var courtesy = setOf("please", "pls", "plz", "thanks", "thank", "you", "thx", "ty", "cheers")

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// matchLead returns the longest answer starting at toks[i] (an emoji vote or a phrase) and the index
// after it, or nil.
func matchLead(toks []rtoken, i int) (*phrase, int) {
	if i >= len(toks) {
		return nil, i
	}
	if t := toks[i]; t.kind == tkEmoji {
		if v := voteOf(t.text); v != IntentUnclear {
			return &phrase{words: []string{t.text}, intent: v, strong: true}, i + 1
		}
		return nil, i
	}
	var best *phrase
	for k := range leads {
		p := &leads[k]
		if matchesAt(toks, i, p) && (best == nil || len(p.words) > len(best.words)) {
			best = p
		}
	}
	if best == nil {
		return nil, i
	}
	return best, i + len(best.words)
}

// matchesAt reports whether the words of p are the tokens from toks[i] on.
func matchesAt(toks []rtoken, i int, p *phrase) bool {
	if i+len(p.words) > len(toks) {
		return false
	}
	for k, w := range p.words {
		if t := toks[i+k]; t.kind != tkWord || t.text != w {
			return false
		}
	}
	return true
}

// phraseAt returns the text of the longest phrase of table at toks[i], or "".
func phraseAt(toks []rtoken, i int, table []phrase) string {
	best := ""
	for k := range table {
		if p := &table[k]; matchesAt(toks, i, p) && len(p.String()) > len(best) {
			best = p.String()
		}
	}
	return best
}

// findPhrase returns the first phrase of table anywhere in toks, or "".
func findPhrase(toks []rtoken, table []phrase) string {
	for i := range toks {
		if p := phraseAt(toks, i, table); p != "" {
			return p
		}
	}
	return ""
}
