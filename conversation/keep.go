package conversation

import (
	"context"
	"encoding/json"
	"time"

	"go.uber.org/zap"

	"threadflow/db"
)

// Keep holds this Inbox's kept events until ctx ends: at once and every third of a claim's life, it
// renews the claims on the events the Inbox holds, then takes over the kept events of platform
// whose process died before handling them (their claims lapsed) and queues them as Recovered
// messages. The first pass is the start-up's: what a crash of the previous run of this process
// left is taken over as soon as its claims lapse.
func (in *Inbox) Keep(ctx context.Context, platform string) {
	if in.k == nil {
		return
	}
	tick := time.NewTicker(in.claim / 3)
	defer tick.Stop()
	for {
		in.renew(ctx)
		in.takeOver(ctx, platform)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// renew extends the claims of the events this Inbox holds; none held, nothing is written.
func (in *Inbox) renew(ctx context.Context) {
	in.mu.Lock()
	held := in.held
	in.mu.Unlock()
	if held == 0 {
		return
	}
	if _, err := in.k.RenewInbound(ctx, in.owner, in.claim); err != nil && ctx.Err() == nil {
		// The claims may lapse and another process take the events over: they are then handled
		// twice, which handlers allow.
		in.log.Warn("conversation.inbound_renew_failed", zap.Int("held", held), zap.Error(err))
	}
}

// takeOver claims lapsed kept events of platform, a batch at a time, and queues them.
func (in *Inbox) takeOver(ctx context.Context, platform string) {
	for ctx.Err() == nil && !in.isClosed() {
		evs, err := in.k.ClaimInbound(ctx, platform, in.owner, in.claim, maxTakeOver)
		if err != nil {
			if ctx.Err() == nil {
				in.log.Warn("conversation.inbound_take_over_failed", zap.String("platform", platform), zap.Error(err))
			}
			return
		}
		for _, e := range evs {
			in.recover(ctx, e)
		}
		if len(evs) < maxTakeOver {
			return
		}
	}
}

// MaxTakeovers is how many times a request is taken over from a process that died holding it
// before it is given up: one whose handling itself kills the process (a crash no recover catches)
// would otherwise take every replica down in turn, forever.
const MaxTakeovers = 3

// recover queues one taken-over event's message, marked Recovered. A message that cannot be read
// back, or was taken over too often, is recorded handled and logged: it is given up.
func (in *Inbox) recover(ctx context.Context, e db.KeptEvent) {
	var m Message
	err := json.Unmarshal(e.Message, &m)
	if err != nil || e.Takeovers > MaxTakeovers {
		in.log.Error("conversation.inbound_given_up", zap.String("platform", e.Platform), zap.String("event_id", e.EventID),
			zap.Int("takeovers", e.Takeovers), zap.Error(err))
		if err := in.k.HandledInbound(ctx, []db.InboundEvent{e.InboundEvent}); err != nil {
			in.log.Warn("conversation.inbound_handled_unrecorded", zap.String("event_id", e.EventID), zap.Error(err))
		}
		return
	}
	m.Platform, m.EventID, m.Recovered = e.Platform, e.EventID, true
	in.mu.Lock()
	in.held++
	in.mu.Unlock()
	if _, err := in.enqueue(item{Message: m, kept: true}); err != nil {
		return // closing: the event stays kept, and its claim lapses for another process
	}
	in.log.Info("conversation.inbound_taken_over", zap.String("platform", e.Platform), zap.String("event_id", e.EventID),
		zap.String("conversation", m.ConversationID()))
}
