package dispatch

import (
	"strings"
	"testing"
	"time"

	"threadflow/db"
)

// /workflow status says how many active runs it left out, and past the bound of its count that
// there are more than it counted (issue 34: the count stops, as the dashboard's "1000+" does).
func TestStatusSaysMoreThanItCounted(t *testing.T) {
	paused := db.Run{ID: "r1", Workflow: "gated", Status: db.StatusPaused, CreatedAt: time.Now(),
		Meta: db.Meta{Pause: &db.Pause{Node: "ok"}}}
	var b Dispatcher
	for _, c := range []struct {
		more leftOut
		want string
	}{
		{leftOut{n: 3}, "…and 3 more active runs, not listed here."},
		{leftOut{n: statusCounted - 50, over: true}, "…and over 150 more active runs, not listed here."},
	} {
		got := b.statusList(t.Context(), [3][]db.Run{{paused}}, [2]leftOut{c.more}).String()
		if !strings.Contains(got, c.want) {
			t.Errorf("status with %+v left out:\n%s\nwant it to say %q", c.more, got, c.want)
		}
	}
}
