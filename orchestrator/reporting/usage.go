package reporting

import (
	"fmt"
	"strings"

	"github.com/dustin/go-humanize"

	"threadflow/db"
)

// UsageText says what agent turns used, the same words in chat, the terminal and the dashboard:
// "$0.0600 over 3 agent turns (1,200 input, 300 output tokens)". A cost that is partly or wholly
// unknown says so (never $0), and one computed from the price table says it is estimated.
func UsageText(u db.UsageSum) string {
	turns := fmt.Sprintf("%d agent turn", u.Turns)
	if u.Turns != 1 {
		turns += "s"
	}
	var cost string
	switch {
	case u.UnpricedTurns == u.Turns:
		cost = "cost unknown"
	case u.UnpricedTurns > 0:
		cost = "at least " + db.FormatUSD(u.CostNanos)
	default:
		cost = db.FormatUSD(u.CostNanos)
	}
	if u.Estimated && u.UnpricedTurns < u.Turns {
		cost += " (estimated from the price table)"
	}
	s := cost + " over " + turns
	if u.Turns > u.UnknownTurns {
		s += " (" + tokensText(u) + ")"
	}
	var notes []string
	if u.UnknownTurns > 0 {
		notes = append(notes, fmt.Sprintf("%d reported no usage", u.UnknownTurns))
	}
	if unpriced := u.UnpricedTurns - u.UnknownTurns; unpriced > 0 {
		notes = append(notes, fmt.Sprintf("%d of a model without a price", unpriced))
	}
	if len(notes) > 0 {
		s += "; " + strings.Join(notes, ", ")
	}
	return s
}

func tokensText(u db.UsageSum) string {
	parts := []string{humanize.Comma(u.InputTokens) + " input", humanize.Comma(u.OutputTokens) + " output"}
	if u.CacheReadTokens > 0 {
		parts = append(parts, humanize.Comma(u.CacheReadTokens)+" cache read")
	}
	if u.CacheWriteTokens > 0 {
		parts = append(parts, humanize.Comma(u.CacheWriteTokens)+" cache write")
	}
	return strings.Join(parts, ", ") + " tokens"
}
