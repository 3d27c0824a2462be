package workflow

import (
	"fmt"
	"sort"
	"strings"
)

// Summary counts what a Discover loaded and left out: files refused for fields they may not have
// (Archon's, docs/archon.md) by field, and files with other problems.
type Summary struct {
	Loaded  int            // workflows in the catalog
	Refused int            // files refused for one or more fields
	Broken  int            // files left out for other problems
	ByField map[string]int // refused files per field
}

// Summarize counts the catalog and the problems Discover returned with it.
func Summarize(cat *Catalog, errs Errors) Summary { return SummarizeErrors(len(cat.byName), errs) }

// SummarizeErrors counts loaded workflows and the problems of the files left out.
func SummarizeErrors(loaded int, errs Errors) Summary {
	s := Summary{Loaded: loaded, ByField: map[string]int{}}
	refused, broken := map[string]bool{}, map[string]bool{}
	for _, e := range errs {
		if len(e.Refused) > 0 {
			refused[e.File] = true
			for _, f := range e.Refused {
				s.ByField[f]++
			}
			continue
		}
		broken[e.File] = true
	}
	for f := range refused {
		delete(broken, f)
	}
	s.Refused, s.Broken = len(refused), len(broken)
	return s
}

// String is the summary as one line, fields by how many files they refused.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Summary: %d loaded, %d refused", s.Loaded, s.Refused)
	if len(s.ByField) > 0 {
		fields := make([]string, 0, len(s.ByField))
		for f := range s.ByField {
			fields = append(fields, f)
		}
		sort.Slice(fields, func(i, j int) bool {
			if s.ByField[fields[i]] != s.ByField[fields[j]] {
				return s.ByField[fields[i]] > s.ByField[fields[j]]
			}
			return fields[i] < fields[j]
		})
		parts := make([]string, len(fields))
		for i, f := range fields {
			parts[i] = fmt.Sprintf("%s %d", f, s.ByField[f])
		}
		fmt.Fprintf(&b, " (by field: %s)", strings.Join(parts, ", "))
	}
	fmt.Fprintf(&b, ", %d with other problems.", s.Broken)
	return b.String()
}
