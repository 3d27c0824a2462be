package maintenance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"threadflow/conversation"
	"threadflow/db"
	"threadflow/platform"
)

// Notifications. A message posted in a run's thread that mentions people, and every direct message
// a run owes (db.TargetDirect), is recorded as a `notified` event in its delivery's transaction: the
// run's history says who was told once they were.

// mentioned is the notified event of a thread message that mentions people, or nil.
func mentioned(e db.OutboxEntry, rep conversation.Reply) []db.Event {
	to := rep.Text.Mentions()
	if len(to) == 0 {
		return nil
	}
	return []db.Event{db.NewEvent(e.RunID, "", 0, db.NotifiedData{About: e.Kind, How: db.NotifyMention, To: to}, time.Time{})}
}

// direct sends a direct notification to each person it names, groups expanded into their members,
// with a link to the run's message it is about; a person who takes no DMs from the bot is skipped
// and named. It fails, to be tried again whole, only while nobody was told yet (a group's lookup
// failed, the platform failed at the first person): a retry never messages again someone told.
func (c *Courier) direct(ctx context.Context, ob conversation.Outbox, in conversation.Address, e db.OutboxEntry) (db.Delivery, error) {
	var d conversation.Direct
	if err := json.Unmarshal(e.Reply, &d); err != nil {
		return db.Delivery{}, fmt.Errorf("%w: the owed direct message does not decode: %v", conversation.ErrRefused, err)
	}
	m, ok := conversation.MessengerOf(ob)
	if !ok {
		return db.Delivery{}, nil // the platform has no direct messages (the terminal, the web): nobody to tell
	}
	to, why, err := recipients(ctx, m, in, d.To)
	if err != nil {
		return db.Delivery{}, err
	}
	rep := d.Reply
	rep.RunID, rep.Key = e.RunID, ""
	rep.Text = rep.Text.Append(c.link(ctx, m, e.RunID, d.Link)...)
	ev := db.NotifiedData{About: d.About, How: db.NotifyDM, Why: why}
	for _, id := range to {
		_, err := m.PostDirect(ctx, id, rep)
		switch {
		case err == nil:
			ev.To = append(ev.To, id)
		case errors.Is(err, conversation.ErrNoDM):
			ev.Skipped = append(ev.Skipped, id)
		default:
			if len(ev.To) == 0 && len(ev.Skipped) == 0 {
				return db.Delivery{}, err // nobody told yet: the whole message is tried again
			}
			ev.Skipped = append(ev.Skipped, id)
			ev.Why = strings.TrimPrefix(ev.Why+"; "+err.Error(), "; ")
		}
	}
	if len(ev.To) == 0 && len(ev.Skipped) == 0 && ev.Why == "" {
		return db.Delivery{}, nil
	}
	return db.Delivery{Events: []db.Event{db.NewEvent(e.RunID, "", 0, ev, time.Time{})}}, nil
}

// recipients are the people to tell: the ids of the run's platform, and the members of its groups,
// each once, at most conversation.MaxDirectRecipients; why says who was left out.
func recipients(ctx context.Context, m conversation.Messenger, in conversation.Address, list []string) ([]string, string, error) {
	var (
		out []string
		why []string
	)
	add := func(id string) {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	for _, entry := range list {
		if name, _, ok := platform.SplitGroup(entry); ok {
			if name != in.Platform {
				continue
			}
			members, more, err := m.Members(ctx, in, entry, conversation.MaxDirectRecipients)
			if err != nil {
				return nil, "", fmt.Errorf("members of %s: %w", entry, err)
			}
			if more {
				why = append(why, fmt.Sprintf("%s has more than %d members; the first %d were told", entry, conversation.MaxDirectRecipients, conversation.MaxDirectRecipients))
			}
			for _, id := range members {
				add(id)
			}
			continue
		}
		if name, _, ok := platform.SplitUserID(entry); ok && name == in.Platform {
			add(entry)
		}
	}
	if len(out) > conversation.MaxDirectRecipients {
		why = append(why, fmt.Sprintf("%d people; the first %d were told", len(out), conversation.MaxDirectRecipients))
		out = out[:conversation.MaxDirectRecipients]
	}
	return out, strings.Join(why, "; "), nil
}

// link is the line that opens the run's message recorded as kind, or says where to look when
// there is none (it was never posted) or no link can be made.
func (c *Courier) link(ctx context.Context, m conversation.Messenger, runID, kind string) []conversation.Span {
	if kind == "" {
		return nil
	}
	ref, found, err := c.recorded(ctx, runID, kind)
	if err == nil && found {
		if url, err := m.Link(ctx, ref); err == nil && url != "" {
			return []conversation.Span{conversation.P("\n"), conversation.P(url)}
		}
	}
	return []conversation.Span{conversation.P("\nSee the run's thread.")}
}
