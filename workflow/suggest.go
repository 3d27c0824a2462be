package workflow

import (
	"fmt"
	"strings"
)

// suggest returns the "how to fix it" half of a message about an unknown name: the closest known
// name when one is close enough to be a typo, otherwise the list of known names.
func suggest(name string, known []string, plural string) string {
	if best := closest(name, known); best != "" {
		return fmt.Sprintf("did you mean `%s`?", best)
	}
	if len(known) == 0 {
		return fmt.Sprintf("there are no %s to choose from", plural)
	}
	shown := known
	if len(shown) > 10 {
		shown = shown[:10]
	}
	more := ""
	if len(known) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(known)-len(shown))
	}
	return fmt.Sprintf("known %s: %s%s", plural, strings.Join(shown, ", "), more)
}

// closest returns the known name with the smallest edit distance to name, if that distance looks
// like a typo (at most 2, or a third of the name for long names).
func closest(name string, known []string) string {
	if len(name) > 256 {
		return "" // edit distance is quadratic; hostile names get the plain list
	}
	best, bestDist := "", max(2, len(name)/3)+1
	for _, k := range known {
		if d := editDistance(name, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance over bytes, with one row of memory.
func editDistance(a, b string) int {
	row := make([]int, len(b)+1)
	for j := range row {
		row[j] = j
	}
	for i := 1; i <= len(a); i++ {
		prev := row[0]
		row[0] = i
		for j := 1; j <= len(b); j++ {
			cur := row[j]
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			row[j] = min(row[j]+1, row[j-1]+1, prev+cost)
			prev = cur
		}
	}
	return row[len(b)]
}
