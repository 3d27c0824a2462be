package workflow

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// archonDecoder translates one Archon file onto our nodes. It is our decoder with the file's
// bundle and workflow-level defaults, and it collects refusals so that a file gets one message
// naming every field it cannot honour.
type archonDecoder struct {
	*decoder
	bundle           *archonBundle
	provider, effort string
	modelRef         string // the workflow's model, resolved per node (its provider may differ)
	modelAt          field
	refused          []archonRefusal
	fileOf           map[*yaml.Node]string // included nodes -> the file they come from
	solo             map[string]bool       // node id -> alone in its layer
}

// archonRefusal is one field the file cannot have here.
type archonRefusal struct {
	field     string
	file      string // the file it is in: the workflow's, or an included one's
	line, col int
	why       string
}

// Archon's defaults (docs/archon.md): AI nodes retry transient failures twice, 3 s apart.
const (
	archonAIAttempts = 3
	archonAIDelay    = 3 * time.Second
	// archonSubprocessTimeout bounds a bash node without `timeout`, and each until_bash check
	// (Archon's SUBPROCESS_DEFAULT_TIMEOUT).
	archonSubprocessTimeout = 2 * time.Minute
	// archonIncludeDepth is Archon's INCLUDE_MAX_DEPTH.
	archonIncludeDepth = 3
)

// refuse records that the field at n cannot be honoured, for the reason archonRefusals gives.
func (a *archonDecoder) refuse(n *yaml.Node, field string) {
	why := archonRefusals[field]
	a.refused = append(a.refused, archonRefusal{field: field, file: a.file, line: n.Line, col: n.Column, why: why})
}

// refusalError is the one message a file with refusals gets: every refused field with its line
// and reason, placed at the first.
func (a *archonDecoder) refusalError() *Error {
	if len(a.refused) == 0 {
		return nil
	}
	sort.SliceStable(a.refused, func(i, j int) bool {
		ri, rj := a.refused[i], a.refused[j]
		return (ri.file == a.file) != (rj.file == a.file) && ri.file == a.file || ri.file == rj.file && ri.line < rj.line
	})
	var parts, fields []string
	seen := map[string]bool{}
	for _, r := range a.refused {
		where := fmt.Sprintf("line %d", r.line)
		if r.file != a.file {
			where += " of " + r.file
		}
		parts = append(parts, fmt.Sprintf("`%s` (%s): %s", r.field, where, r.why))
		if !seen[r.field] {
			seen[r.field] = true
			fields = append(fields, r.field)
		}
	}
	first := a.refused[0]
	if first.file != a.file { // only included files have refusals: their lines are not this file's
		first.line, first.col = 1, 1
	}
	return &Error{File: a.file, Line: first.line, Col: first.col, Refused: fields,
		Msg: "refused, this Archon workflow cannot run here as written: " + strings.Join(parts, "; ")}
}

// archonWorkflow decodes a file of Archon's dialect.
func (d *decoder) archonWorkflow(root *yaml.Node, w *Workflow, b *archonBundle) {
	w.Dialect = DialectArchon
	d.archon = true
	a := &archonDecoder{decoder: d, bundle: b, fileOf: map[*yaml.Node]string{}}
	fs := d.mapping(root, "the workflow", archonWorkflowFields)
	if f, ok := fs["name"]; ok {
		w.Name, _ = d.id(f)
	} else {
		d.errorf(root, "missing `name`; add a line like `name: my-workflow`")
	}
	if f, ok := fs["description"]; ok {
		w.Description, _ = d.str(f)
	}
	a.workflowSettings(fs, w)
	f, ok := fs["nodes"]
	switch {
	case !ok && (fs["steps"].key != nil || fs["loop"].key != nil):
		// refused above
	case !ok:
		d.errorf(root, "missing `nodes`; Threadflow runs Archon's DAG mode, a list of nodes")
	case f.val.Kind != yaml.SequenceNode || len(f.val.Content) == 0:
		d.errorf(f.val, "`nodes` must be a non-empty list of nodes, found %s", describe(f.val))
	default:
		items := a.expandIncludes(f.val.Content, 0)
		a.solo = archonSoloLayers(items)
		file := d.file
		for _, n := range items {
			if inc, ok := a.fileOf[n]; ok {
				d.file = inc
			}
			if node := a.node(n); node != nil {
				w.Nodes = append(w.Nodes, node)
			}
			d.file = file
		}
	}
	if e := a.refusalError(); e != nil {
		d.errs = append(d.errs, e)
	}
}

// workflowSettings decodes the workflow-level fields other than name, description and nodes.
func (a *archonDecoder) workflowSettings(fs map[string]field, w *Workflow) {
	for _, key := range archonWorkflowRefused {
		if f, ok := fs[key]; ok {
			a.refuse(f.key, key)
		}
	}
	if f, ok := fs["provider"]; ok {
		a.provider = a.providerOf(f)
	}
	if f, ok := fs["model"]; ok {
		a.modelRef, _ = a.nonEmpty(f)
		a.modelAt = f
	}
	if f, ok := fs["modelReasoningEffort"]; ok { // Archon's deprecated spelling of effort
		a.effort, _ = a.oneOf(f, archonEfforts)
	}
	if f, ok := fs["effort"]; ok {
		a.effort, _ = a.oneOf(f, archonEfforts)
	}
	if f, ok := fs["interactive"]; ok {
		a.boolean(f) // every run talks in its thread: Archon's foreground
	}
	if f, ok := fs["mutates_checkout"]; ok {
		// Runs never share a checkout unless worktree.enabled is false (docs/archon.md); then a
		// fan-out runs such children at once only if they declare they do not write (fanout.go).
		w.ReadsCheckoutOnly = !a.boolean(f)
	}
	if f, ok := fs["tags"]; ok && f.val.Kind != yaml.SequenceNode {
		a.errorf(f.val, "`tags` must be a list, found %s", describe(f.val))
	}
	if f, ok := fs["returns"]; ok {
		a.str(f) // read by includers (expandIncludes)
	}
	if f, ok := fs["worktree"]; ok {
		wt := a.mapping(f.val, "`worktree`", []string{"enabled"})
		if g, ok := wt["enabled"]; ok {
			w.LiveCheckout = !a.boolean(g)
		}
	}
}

// archonEfforts are Archon's effort levels.
var archonEfforts = []string{"minimal", "low", "medium", "high", "xhigh", "max"}

// providerOf reads a provider: claude or codex, anything else refused.
func (a *archonDecoder) providerOf(f field) string {
	s, ok := a.nonEmpty(f)
	if !ok {
		return ""
	}
	if !contains(providers, s) {
		a.refuse(f.val, "provider")
		return ""
	}
	return s
}

// archonSoloLayers says, for each node id, whether it is alone in its layer of the graph: Archon
// runs such a node in the session of the node before it unless it says `context: fresh`, and
// starts a fresh session for nodes that share a layer.
func archonSoloLayers(items []*yaml.Node) map[string]bool {
	deps := map[string][]string{}
	var ids []string
	for _, n := range items {
		id, ds := archonIDAndDeps(n)
		if id != "" {
			ids = append(ids, id)
			deps[id] = ds
		}
	}
	depth := map[string]int{}
	var depthOf func(id string, seen map[string]bool) int
	depthOf = func(id string, seen map[string]bool) int {
		if v, ok := depth[id]; ok {
			return v
		}
		if seen[id] {
			return 0 // a cycle: reported by the graph checks
		}
		seen[id] = true
		v := 0
		for _, dep := range deps[id] {
			if _, known := deps[dep]; known {
				v = max(v, depthOf(dep, seen)+1)
			}
		}
		depth[id] = v
		return v
	}
	count := map[int]int{}
	for _, id := range ids {
		count[depthOf(id, map[string]bool{})]++
	}
	solo := map[string]bool{}
	for _, id := range ids {
		solo[id] = count[depth[id]] == 1
	}
	return solo
}

// archonIDAndDeps reads a node's id and depends_on without reporting anything.
func archonIDAndDeps(n *yaml.Node) (string, []string) {
	var raw struct {
		ID        string   `yaml:"id"`
		DependsOn []string `yaml:"depends_on"`
	}
	if n.Decode(&raw) != nil {
		return "", nil // the decoder reports the node's problems with their positions
	}
	return raw.ID, raw.DependsOn
}

// ms reads a number of milliseconds, Archon's unit for timeouts.
func (a *archonDecoder) ms(f field) (time.Duration, bool) {
	var v float64
	if f.val.Kind != yaml.ScalarNode || (f.val.ShortTag() != "!!int" && f.val.ShortTag() != "!!float") || f.val.Decode(&v) != nil {
		a.errorf(f.val, "`%s` must be a number of milliseconds, found %s", f.key.Value, describe(f.val))
		return 0, false
	}
	if v <= 0 || v > float64(365*24*time.Hour/time.Millisecond) {
		a.errorf(f.val, "`%s` must be more than zero milliseconds and at most a year, found %s", f.key.Value, f.val.Value)
		return 0, false
	}
	return time.Duration(v * float64(time.Millisecond)), true
}

// strList reads a list of non-empty strings.
func (a *archonDecoder) strList(f field) ([]string, bool) {
	if f.val.Kind != yaml.SequenceNode {
		a.errorf(f.val, "`%s` must be a list, found %s", f.key.Value, describe(f.val))
		return nil, false
	}
	out := make([]string, 0, len(f.val.Content))
	for _, item := range f.val.Content {
		s, ok := a.nonEmpty(field{f.key, item})
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}
