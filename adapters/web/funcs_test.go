package web

import "testing"

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
