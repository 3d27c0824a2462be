package slackfake

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// Page sizes of the read methods, as Slack documents them for internal apps (Tier 3).
const (
	historyDefaultLimit = 100
	historyMaxLimit     = 999
	repliesDefaultLimit = 1000
	repliesMaxLimit     = 1000
)

// history answers conversations.history: the channel's top-level messages (thread roots included),
// newest first, between oldest and latest, a page at a time.
func (s *Server) history(r *http.Request) apiResult {
	return s.readLocked(r, func(channel string) apiResult {
		msgs := s.readableLocked(func(m *Message) bool { return m.Channel == channel && m.ThreadTS == "" })
		sort.Slice(msgs, func(i, j int) bool { return tsLess(msgs[j].TS, msgs[i].TS) })
		res, errCode := s.pageLocked(r, msgs, historyDefaultLimit, historyMaxLimit)
		if errCode != "" {
			return apiResult{"error": errCode}
		}
		res["pin_count"] = 0
		return res
	})
}

// replies answers conversations.replies: the thread's root, then its replies, oldest first,
// between oldest and latest, a page at a time. ts must name a message of the channel.
func (s *Server) replies(r *http.Request) apiResult {
	ts := r.Form.Get("ts")
	return s.readLocked(r, func(channel string) apiResult {
		root := s.readableLocked(func(m *Message) bool { return m.Channel == channel && m.TS == ts })
		if len(root) == 0 {
			return apiResult{"error": "thread_not_found"}
		}
		msgs := append(root, s.readableLocked(func(m *Message) bool { return m.Channel == channel && m.ThreadTS == ts && m.TS != ts })...)
		sort.SliceStable(msgs[1:], func(i, j int) bool { return tsLess(msgs[1+i].TS, msgs[1+j].TS) })
		res, errCode := s.pageLocked(r, msgs, repliesDefaultLimit, repliesMaxLimit)
		if errCode != "" {
			return apiResult{"error": errCode}
		}
		return res
	})
}

// readLocked answers a read method of the request's channel: first the errors every read method
// answers (no channel, FailReads), then answer, called with s.mu held. Every read is counted (Reads).
func (s *Server) readLocked(r *http.Request, answer func(channel string) apiResult) apiResult {
	channel := r.Form.Get("channel")
	if channel == "" {
		return apiResult{"error": "channel_not_found"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	if s.readError != "" {
		return apiResult{"error": s.readError}
	}
	return answer(channel)
}

// readableLocked returns the messages a read method can see (the bot's and people's) that keep
// says to. Callers hold s.mu.
func (s *Server) readableLocked(keep func(*Message) bool) []*Message {
	var out []*Message
	for _, all := range [][]*Message{s.messages, s.said} {
		for _, m := range all {
			if keep(m) {
				out = append(out, m)
			}
		}
	}
	return out
}

// pageLocked filters msgs (in the order the method returns them) by oldest, latest and inclusive
// and cuts the page the cursor and limit ask for. A cursor is the offset of the page's first
// message, handed out as response_metadata.next_cursor. Callers hold s.mu.
func (s *Server) pageLocked(r *http.Request, msgs []*Message, defaultLimit, maxLimit int) (apiResult, string) {
	inclusive := truthy(r.Form.Get("inclusive"))
	var bounds [2]int64
	for i, name := range []string{"oldest", "latest"} {
		v := r.Form.Get(name)
		if v == "" {
			continue
		}
		us, ok := micros(v)
		if !ok {
			return nil, "invalid_ts_" + name
		}
		bounds[i] = us
	}
	var in []*Message
	for _, m := range msgs {
		us, _ := micros(m.TS)
		if bounds[0] != 0 && (us < bounds[0] || us == bounds[0] && !inclusive) ||
			bounds[1] != 0 && (us > bounds[1] || us == bounds[1] && !inclusive) {
			continue
		}
		in = append(in, m)
	}
	limit := defaultLimit
	if v := r.Form.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, "invalid_limit"
		}
		if n > 0 {
			limit = min(n, maxLimit)
		}
	}
	start := 0
	if c := r.Form.Get("cursor"); c != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(c, "offset:"))
		if !strings.HasPrefix(c, "offset:") || err != nil || n < 0 || n > len(in) {
			return nil, "invalid_cursor"
		}
		start = n
	}
	end := min(start+limit, len(in))
	withMetadata := truthy(r.Form.Get("include_all_metadata"))
	page := make([]apiResult, 0, end-start)
	for _, m := range in[start:end] {
		page = append(page, s.messageJSONLocked(m, withMetadata))
	}
	next := ""
	if end < len(in) {
		next = "offset:" + strconv.Itoa(end)
	}
	return apiResult{"ok": true, "messages": page, "has_more": next != "",
		"response_metadata": apiResult{"next_cursor": next}}, ""
}

// messageJSONLocked is a message as the read methods return it. Metadata is included only when the
// read asked for it with include_all_metadata, as with Slack. Callers hold s.mu.
func (s *Server) messageJSONLocked(m *Message, withMetadata bool) apiResult {
	out := apiResult{"type": "message", "user": m.User, "text": m.Text, "ts": m.TS}
	if m.User == BotUserID {
		out["bot_id"], out["app_id"] = BotID, AppID
	}
	if m.ThreadTS != "" {
		out["thread_ts"] = m.ThreadTS
	} else if n := s.repliesLocked(m); n > 0 {
		out["thread_ts"], out["reply_count"] = m.TS, n
	}
	if m.Edited {
		out["edited"] = apiResult{"user": m.User, "ts": m.TS}
	}
	if withMetadata && m.Metadata.EventType != "" {
		out["metadata"] = apiResult{"event_type": m.Metadata.EventType, "event_payload": m.Metadata.Payload}
	}
	return out
}

// repliesLocked counts the replies in the thread m is the root of. Callers hold s.mu.
func (s *Server) repliesLocked(m *Message) int {
	return len(s.readableLocked(func(x *Message) bool { return x.Channel == m.Channel && x.ThreadTS == m.TS && x.TS != m.TS }))
}

// tsLess orders Slack timestamps by time.
func tsLess(a, b string) bool {
	x, _ := micros(a)
	y, _ := micros(b)
	return x < y
}

// truthy reads a boolean argument the way Slack does: "1" or "true".
func truthy(v string) bool { return v == "1" || v == "true" }
