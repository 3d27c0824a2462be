package dispatch

import (
	"context"
	"strings"

	"threadflow/conversation"
	"threadflow/db"
)

// autocompleteLimit is the most suggestions a platform shows (Discord's limit is 25).
const autocompleteLimit = 25

// WorkflowNames suggests workflow names starting with prefix, for platforms with autocomplete.
func (b *Dispatcher) WorkflowNames(_ context.Context, prefix string) []string {
	var out []string
	for _, n := range b.Catalogs.Catalog().Names() {
		if strings.HasPrefix(n, strings.ToLower(prefix)) && len(out) < autocompleteLimit {
			out = append(out, n)
		}
	}
	return out
}

// RunIDs suggests ids of this conversation's runs that a person may still act on.
func (b *Dispatcher) RunIDs(ctx context.Context, at conversation.Address, prefix string) []string {
	m := conversation.Message{Address: at}
	runs, err := b.conversationRuns(ctx, m, []db.Status{db.StatusQueued, db.StatusRunning, db.StatusPaused, db.StatusFailed})
	if err != nil {
		return nil
	}
	var out []string
	for _, r := range runs {
		if strings.HasPrefix(r.ID, strings.ToLower(prefix)) && len(out) < autocompleteLimit {
			out = append(out, r.ID)
		}
	}
	return out
}
