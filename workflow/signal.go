package workflow

import (
	"regexp"
	"strings"
)

// Done reports whether an iteration's output ends the loop by its `until` signal. Threadflow's rule
// is the signal anywhere in the output. Archon's (Loop.ArchonSignal) is stricter, so that prose such
// as "not COMPLETE yet" does not end a loop: the signal wrapped in a tag (<promise>COMPLETE</promise>,
// any tag whose closing name matches), at the very end of the output, or on a line of its own.
func (l *Loop) Done(output string) bool {
	if l.Until == "" {
		return false
	}
	if !l.ArchonSignal {
		return strings.Contains(output, l.Until)
	}
	q := regexp.QuoteMeta(l.Until)
	tagged := regexp.MustCompile(`(?i)<([a-zA-Z][\w-]*)[^>]*>\s*` + q + `\s*</([a-zA-Z][\w-]*)>`)
	for _, m := range tagged.FindAllStringSubmatch(output, -1) {
		if strings.EqualFold(m[1], m[2]) {
			return true
		}
	}
	end := regexp.MustCompile(q + `[\s.,;:!?]*$`)
	ownLine := regexp.MustCompile(`(?m)^\s*` + q + `\s*$`)
	return end.MatchString(output) || ownLine.MatchString(output)
}
