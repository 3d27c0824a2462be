package web

import (
	"fmt"
	"strings"
	"testing"

	"threadflow/db"
)

func TestPersonShowsTheNameWithTheID(t *testing.T) {
	t.Parallel()
	tests := []struct{ id, name, want string }{
		{"discord:920000000000000001", "Alice L", "Alice L (discord:920000000000000001)"},
		{"discord:920000000000000001", "", "discord:920000000000000001"},
		{"web:alice", "alice", "web:alice (unverified)"},           // the web chat's names are typed, and the ids' own (issue 29)
		{"discord:9", "Ann\n<b>x</b>", "Ann <b>x</b> (discord:9)"}, // one line; html/template escapes it
	}
	for _, tt := range tests {
		if got := person(tt.id, tt.name); got != tt.want {
			t.Errorf("person(%q, %q) = %q, want %q", tt.id, tt.name, got, tt.want)
		}
	}
}

// TestNestRowsPutsChildrenUnderTheirParentOnThePage: children follow their parent on the page,
// one level deeper per generation; a child whose parent is on another page stays where it is.
func TestNestRowsPutsChildrenUnderTheirParentOnThePage(t *testing.T) {
	row := func(id, parent string) runRow { return runRow{Run: db.Run{ID: id, ParentRunID: parent}} }
	got := nestRows([]runRow{row("grand", "kid"), row("kid2", "top"), row("kid", "top"), row("orphan", "elsewhere"), row("top", ""), row("other", "")})
	var order []string
	for _, r := range got {
		order = append(order, fmt.Sprintf("%s/%d", r.Run.ID, r.Depth))
	}
	if want := "orphan/0 top/0 kid2/1 kid/1 grand/2 other/0"; strings.Join(order, " ") != want {
		t.Fatalf("nested order = %v, want %s", order, want)
	}
}
