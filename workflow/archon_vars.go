package workflow

import "strings"

// Archon's variables (docs/archon.md) and ours: the same names stay, these are renamed.
var archonRenamed = map[string]string{
	"USER_MESSAGE": "ARGUMENTS",
	"WORKFLOW_ID":  "RUN_ID",
}

// archonUnmapped are Archon variables Threadflow has no value for: a text using one is refused.
var archonUnmapped = map[string]bool{
	"CONTEXT": true, "EXTERNAL_CONTEXT": true, "ISSUE_CONTEXT": true, "PLAN": true,
	"IMPLEMENTATION_SUMMARY": true, "LOOP_PREV": true, "INPUTS": true, "REJECTION_REASON": true,
}

// archonDefaultDocsDir is $DOCS_DIR when .archon/config.yaml names no docs.path (Archon's default).
const archonDefaultDocsDir = "docs/"

// mapVars returns the text of f with Archon's variables mapped onto ours. In a bash script
// $BASE_BRANCH and $DOCS_DIR stay shell variables, set in a first line; in prompts they become
// their values. A variable without a value here, or a field access that this build cannot do
// yet, is refused at f.
func (a *archonDecoder) mapVars(f field, shell bool) string {
	src := f.val.Value
	var b strings.Builder
	last := 0
	var uses []string
	eachRef(src, func(start int, r ref) {
		if r.node != "" {
			return
		}
		name := r.name
		if name == "LOOP_PREV" || strings.HasPrefix(name, "INPUTS") || archonUnmapped[name] {
			a.refuse(f.key, "variable")
			return
		}
		var with string
		switch {
		case archonRenamed[name] != "":
			with = strings.Replace(src[start:r.end], name, archonRenamed[name], 1)
		case name == "BASE_BRANCH" || name == "DOCS_DIR":
			if shell {
				if !contains(uses, name) {
					uses = append(uses, name)
				}
				return
			}
			v, ok := a.configVar(name)
			if !ok {
				a.refuse(f.key, "variable")
				return
			}
			with = v
		default:
			return
		}
		b.WriteString(src[last:start])
		b.WriteString(with)
		last = r.end
	})
	b.WriteString(src[last:])
	if len(uses) == 0 {
		return b.String()
	}
	return a.shellPreamble(uses) + b.String()
}

// configVar is the value of $BASE_BRANCH or $DOCS_DIR from .archon/config.yaml.
func (a *archonDecoder) configVar(name string) (string, bool) {
	if name == "DOCS_DIR" {
		if a.bundle.Config.DocsDir != "" {
			return a.bundle.Config.DocsDir, true
		}
		return archonDefaultDocsDir, true
	}
	return a.bundle.Config.BaseBranch, a.bundle.Config.BaseBranch != ""
}

// shellPreamble sets the config variables a bash script uses. Without worktree.baseBranch,
// $BASE_BRANCH is found as Archon finds it: the remote's default branch, else main.
func (a *archonDecoder) shellPreamble(uses []string) string {
	var b strings.Builder
	for _, name := range uses {
		if v, ok := a.configVar(name); ok {
			b.WriteString(name + "=" + shellQuote(v) + "; ")
			continue
		}
		b.WriteString(`BASE_BRANCH="$(git symbolic-ref --short refs/remotes/origin/HEAD 2>/dev/null | sed 's|^origin/||')"; BASE_BRANCH="${BASE_BRANCH:-main}"; `)
	}
	return strings.TrimSuffix(b.String(), " ") + " # set by Threadflow from .archon/config.yaml\n"
}
