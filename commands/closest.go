package commands

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// Closest returns up to n candidates nearest to name by edit distance (case-insensitive), nearest
// first and alphabetical among equals, for "unknown workflow, did you mean" replies. Candidates too
// far from name to be a plausible typo are left out, so the answer may be empty.
func Closest(name string, candidates []string, n int) []string {
	if n <= 0 {
		return nil
	}
	want := strings.ToLower(name)
	maxDist := max(2, utf8.RuneCountInString(want)/3)
	type scored struct {
		s string
		d int
	}
	var near []scored
	for _, c := range candidates {
		if d := distance(want, strings.ToLower(c)); d <= maxDist {
			near = append(near, scored{c, d})
		}
	}
	sort.Slice(near, func(i, j int) bool {
		if near[i].d != near[j].d {
			return near[i].d < near[j].d
		}
		return near[i].s < near[j].s
	})
	out := make([]string, 0, min(n, len(near)))
	for _, s := range near[:min(n, len(near))] {
		out = append(out, s.s)
	}
	return out
}

// distance is the Levenshtein distance between a and b in runes, using two rows of memory.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
