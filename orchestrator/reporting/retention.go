package reporting

import (
	"fmt"
	"time"

	"threadflow/db"
)

// KeptFor says how long runs are kept (RETENTION, RETENTION_UNFINISHED), as the dashboard and
// `bot prune` say it.
func KeptFor(r db.Retention) string {
	return "completed and cancelled runs are kept " + keptSpan(r.Finished, "after they finish") + ", failed and paused runs " +
		keptSpan(r.Unfinished, "after their last change")
}

// keptSpan is one retention for people: days when whole, else the duration, then when it counts
// from; forever when off.
func keptSpan(d time.Duration, from string) string {
	switch {
	case d <= 0:
		return "forever"
	case d%(24*time.Hour) == 0:
		n := d / (24 * time.Hour)
		if n == 1 {
			return "1 day " + from
		}
		return fmt.Sprintf("%d days %s", n, from)
	}
	return d.String() + " " + from
}
