package platform

import (
	"slices"
	"strings"
)

// People is a list of who may do something: who may start a workflow (`access.run`), who may
// answer a gate (`approvers`). Each entry is a person's platform-qualified id ("slack:U0123ABCD")
// or a group of people: a Slack user group ("slack:group:S0123ABCD") or a Discord role
// ("discord:role:80351110224678913"). `@admins` is kept apart by whoever reads the list (a flag
// next to it), since who the admins are is configuration, not a platform's.
//
// Every list of people is this one type, so every such list takes groups the same way.
type People []string

// Group forms: the infix between a platform's name and a group's id. Only the platforms that have
// groups appear here.
var groupInfix = map[string]string{Slack: "group", Discord: "role"}

// GroupExamples are the group forms as a sentence lists them.
const GroupExamples = "slack:group:S0123ABCD (a Slack user group) or discord:role:80351110224678913 (a Discord role)"

// SplitGroup splits a group entry ("slack:group:S1", "discord:role:R1") into its platform and the
// group's id there; ok is false for anything else, a person's id included.
func SplitGroup(entry string) (name, group string, ok bool) {
	name, rest, found := strings.Cut(entry, ":")
	infix, has := groupInfix[name]
	if !found || !has {
		return "", "", false
	}
	group, ok = strings.CutPrefix(rest, infix+":")
	return name, group, ok && group != "" && !strings.Contains(group, ":")
}

// IsGroup reports whether entry names a group rather than a person.
func IsGroup(entry string) bool {
	_, _, ok := SplitGroup(entry)
	return ok
}

// Groups are the group entries of the list.
func (p People) Groups() []string {
	var out []string
	for _, e := range p {
		if IsGroup(e) {
			out = append(out, e)
		}
	}
	return out
}

// Includes reports whether the person with the platform-qualified id, who belongs to the groups
// memberOf (group entries, checked by the caller when the person acts), is on the list.
func (p People) Includes(id string, memberOf []string) bool {
	if slices.Contains(p, id) {
		return true
	}
	for _, g := range memberOf {
		if IsGroup(g) && slices.Contains(p, g) {
			return true
		}
	}
	return false
}
