package execution

import "time"

// A node's duration is defined here, once. It is the wall time from the start of the node's first
// attempt in an execution (for a gate: from when it asked) to its completion or final failure,
// retries and their delays included, in whole milliseconds. The executor measures it and records it
// in the node's final event (`duration_ms` of node_completed or node_failed), and every display
// reads that number: the live status message in chat, `/workflow status ID`, `bot workflow status`
// and the dashboard. A skipped node, and a node that is running, has none. A node the run's stop
// closed (a rejected gate, a cancelled node) has no final event: its duration runs from its latest
// start to the stop.

// measured is the duration the executor records for a node that took d.
func measured(d time.Duration) time.Duration { return max(d, 0).Truncate(time.Millisecond) }

// NodeDuration is the duration of a node from its final event: the recorded duration_ms, or, for
// an event written before durations were recorded, the time from the node's latest start to the
// event.
func NodeDuration(ms *int64, started, at time.Time) time.Duration {
	if ms != nil {
		return time.Duration(*ms) * time.Millisecond
	}
	if started.IsZero() || !at.After(started) {
		return 0
	}
	return measured(at.Sub(started))
}

// FormatDuration renders a duration for people: 412ms, 1.4s, 2m5s.
func FormatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// durationMS is the payload form of a measured duration.
func durationMS(d time.Duration) *int64 {
	ms := d.Milliseconds()
	return &ms
}
