package workflow

import (
	"slices"
	"strings"
)

// validateGraph checks what spans nodes: unique ids and environment names, known dependencies,
// no cycles, and output references that only read upstream nodes.
func (d *decoder) validateGraph(w *Workflow) {
	byID := d.uniqueIDs(w)
	ids := make([]string, 0, len(byID))
	for _, n := range w.Nodes {
		if byID[n.ID] == n {
			ids = append(ids, n.ID)
		}
	}
	for _, n := range w.Nodes {
		m := d.meta[n]
		for i, dep := range n.DependsOn {
			if byID[dep] == nil {
				d.errorf(m.deps[i], "node `%s` depends on unknown node `%s`; %s", n.ID, dep, suggest(dep, ids, "nodes"))
			}
		}
	}
	d.cycles(w, byID)
	w.reads = map[string][]string{}
	for _, n := range w.Nodes {
		d.checkRefs(w, n, byID, ids)
	}
}

// uniqueIDs reports repeated ids and ids that collide as environment names, and returns the first
// node of each id.
func (d *decoder) uniqueIDs(w *Workflow) map[string]*Node {
	byID := make(map[string]*Node, len(w.Nodes))
	byEnv := make(map[string]*Node, len(w.Nodes))
	for _, n := range w.Nodes {
		at := d.meta[n].id
		if first, dup := byID[n.ID]; dup {
			d.errorf(at, "duplicate node id `%s`; the first is at line %d, column %d; rename one", n.ID, first.Line, first.Col)
			continue
		}
		byID[n.ID] = n
		env := OutputEnvName(n.ID)
		if other, clash := byEnv[env]; clash {
			d.errorf(at, "node ids `%s` (line %d) and `%s` both become the shell variable %s; rename one so they differ by more than '-' and '_'", other.ID, other.Line, n.ID, env)
			continue
		}
		byEnv[env] = n
	}
	// Each node also gets TF_OUTPUT_<NODE>_FILE, which must not be another node's output variable.
	for _, n := range w.Nodes {
		if other, clash := byEnv[OutputFileEnvName(n.ID)]; clash && byID[n.ID] == n {
			d.errorf(d.meta[other].id, "node id `%s` becomes the shell variable %s, which already carries the output file of node `%s` (line %d); rename `%s`",
				other.ID, OutputEnvName(other.ID), n.ID, n.Line, other.ID)
		}
	}
	return byID
}

// cycles reports each dependency cycle once, as a path a -> b -> a.
func (d *decoder) cycles(w *Workflow, byID map[string]*Node) {
	const (
		unvisited = iota
		active
		done
	)
	state := map[string]int{}
	seen := map[string]bool{}
	var stack []string
	var visit func(n *Node)
	visit = func(n *Node) {
		state[n.ID] = active
		stack = append(stack, n.ID)
		for _, dep := range n.DependsOn {
			next := byID[dep]
			switch {
			case next == nil:
			case state[dep] == active:
				d.reportCycle(byID, stack[slices.Index(stack, dep):], seen)
			case state[dep] == unvisited:
				visit(next)
			}
		}
		stack = stack[:len(stack)-1]
		state[n.ID] = done
	}
	for _, n := range w.Nodes {
		if byID[n.ID] == n && state[n.ID] == unvisited {
			visit(n)
		}
	}
}

// reportCycle reports the cycle in dependency order at its first node, unless already reported.
// The DFS walks from a node to what it depends on, so the path is reversed to read "runs before".
func (d *decoder) reportCycle(byID map[string]*Node, path []string, seen map[string]bool) {
	cycle := slices.Clone(path)
	slices.Reverse(cycle)
	start := slices.Index(cycle, slices.Min(cycle))
	cycle = append(cycle[start:], cycle[:start]...)
	key := strings.Join(cycle, " ")
	if seen[key] {
		return
	}
	seen[key] = true
	first := byID[cycle[0]]
	d.errorf(d.meta[first].id, "dependency cycle: %s -> %s; remove one of these depends_on entries", strings.Join(cycle, " -> "), cycle[0])
}

// checkRefs checks every $node.output a node reads, in its `when` and in its texts.
// The nodes it reads are kept (Workflow.reads) so that a run looks up only those outputs.
func (d *decoder) checkRefs(w *Workflow, n *Node, byID map[string]*Node, ids []string) {
	m := d.meta[n]
	var up map[string]bool // computed at the first reference: most nodes have none
	check := func(target, field, where string, line, col int) {
		if up == nil {
			up = ancestors(n, byID)
		}
		if !d.checkRef(n, target, where, line, col, up, ids) {
			return
		}
		if field != "" && !d.checkField(n, byID[target], field, where, line, col) {
			return
		}
		if !slices.Contains(w.reads[n.ID], target) {
			w.reads[n.ID] = append(w.reads[n.ID], target)
		}
		if field != "" && d.archon && where != "`when`" { // a condition that cannot be met is false
			if w.fieldReads == nil {
				w.fieldReads = map[string][][2]string{}
			}
			w.fieldReads[n.ID] = append(w.fieldReads[n.ID], [2]string{target, field})
		}
	}
	if n.When != nil {
		for _, o := range n.When.refs(opOutput) {
			line, col := d.posIn(m.when, o.off)
			check(o.text, o.field, "`when`", line, col)
		}
		for _, o := range n.When.refs(opInput) {
			line, col := d.posIn(m.when, o.off)
			d.checkInputRef(w, n, o.text, "`when`", line, col)
		}
	}
	for _, t := range m.texts {
		eachRef(t.val.Value, func(start int, r ref) {
			line, col := d.posIn(t.val, start)
			switch {
			case r.node != "":
				check(r.node, r.field, t.field, line, col)
			case r.input != "":
				d.checkInputRef(w, n, r.input, t.field, line, col)
			}
		})
	}
}

// checkInputRef reports a $inputs.name that names no input of a workflow with typed inputs.
func (d *decoder) checkInputRef(w *Workflow, n *Node, name, where string, line, col int) {
	if _, ok := w.Input(name); ok && w.Typed() {
		return
	}
	if !w.Typed() {
		d.errorAt(line, col, "%s of node `%s` reads `$inputs.%s` but the workflow has no typed inputs; give its inputs a `type` (docs/workflows.md#inputs)", where, n.ID, name)
		return
	}
	names := make([]string, len(w.Inputs))
	for i, in := range w.Inputs {
		names[i] = in.Name
	}
	d.errorAt(line, col, "%s of node `%s` reads `$inputs.%s` but there is no input `%s`; %s", where, n.ID, name, name, suggest(name, names, "inputs"))
}

// checkField reports whether $target.output.field may be read, and says why not when it may not:
// a node with output_format has the fields its schema declares, and no others (an undeclared one
// would read as empty for ever); a bash or script node's output may be any JSON object; other
// nodes answer in prose.
func (d *decoder) checkField(n, target *Node, field, where string, line, col int) bool {
	ref := "`$" + target.ID + ".output." + field + "`"
	switch {
	case !validField(field):
		d.errorAt(line, col, "%s of node `%s` reads %s, which is not a field name (letters, digits and '_', at most %d)", where, n.ID, ref, maxIDLen)
	case d.archon && (target.OutputFormat != nil || target.Kind == KindBash || target.Kind == KindScript):
		return true // Archon's reads fail when they happen, not when the file loads (Graph.MissingField)
	case target.OutputFormat != nil && !target.OutputFormat.hasField(field):
		d.errorAt(line, col, "%s of node `%s` reads %s but the output_format of `%s` declares no field `%s`; %s",
			where, n.ID, ref, target.ID, field, suggest(field, target.OutputFormat.Fields, "fields"))
	case target.OutputFormat != nil, target.Kind == KindBash, target.Kind == KindScript:
		return true
	case target.Kind == KindPrompt:
		d.errorAt(line, col, "%s of node `%s` reads %s but `%s` answers in prose; give it an `output_format` (a JSON Schema) that declares `%s`", where, n.ID, ref, target.ID, field)
	default:
		d.errorAt(line, col, "%s of node `%s` reads %s but `%s` is %s %s node, whose output has no fields; read `$%s.output`",
			where, n.ID, ref, target.ID, article(string(target.Kind)), target.Kind, target.ID)
	}
	return false
}

// checkRef reports whether node n may read target's output, and says why not when it may not.
func (d *decoder) checkRef(n *Node, target, where string, line, col int, up map[string]bool, ids []string) bool {
	switch {
	case !slices.Contains(ids, target):
		d.errorAt(line, col, "%s of node `%s` reads `$%s.output` but there is no node `%s`; %s", where, n.ID, target, target, suggest(target, ids, "nodes"))
	case target == n.ID:
		d.errorAt(line, col, "%s of node `%s` reads its own output, which does not exist yet; read an upstream node instead", where, n.ID)
	case !up[target]:
		d.errorAt(line, col, "%s of node `%s` reads `$%s.output` but `%s` is not upstream of it; add it to depends_on", where, n.ID, target, target)
	default:
		return true
	}
	return false
}

// ancestors is every node n depends on, directly or not.
func ancestors(n *Node, byID map[string]*Node) map[string]bool {
	up := map[string]bool{}
	todo := slices.Clone(n.DependsOn)
	for len(todo) > 0 {
		id := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if up[id] || byID[id] == nil {
			continue
		}
		up[id] = true
		todo = append(todo, byID[id].DependsOn...)
	}
	return up
}

// Graph indexes a workflow's nodes for a scheduler that asks about them once per node event: who
// depends on a node, and which nodes are upstream of it, without a pass over every node.
type Graph struct {
	byID       map[string]*Node
	dependents map[string][]*Node
	order      map[string]int
	reads      map[string][]string // node id -> the upstream outputs its texts and `when` read
	fieldReads map[string][][2]string
	byEnvName  map[string]string // TF_OUTPUT_<NODE> -> node id
}

// MissingField checks the $node.output.field reads of node n of an Archon workflow as Archon does
// (strict, never a silent ”): a field its producer's output_format does not declare, a producer
// that did not run, an output that is not a JSON object, or a key a schemaless output (bash,
// script) lacks fails the reader. A declared field the answer leaves out reads as ”. It returns
// the first bad read and why, or ok false.
func (g *Graph) MissingField(n *Node, v Vars) (node, field, why string, bad bool) {
	for _, r := range g.fieldReads[n.ID] {
		up, f := r[0], r[1]
		fields := v.Fields[up]
		_, ran := v.Outputs[up]
		t := g.byID[up]
		switch {
		case !ran:
			return up, f, up + " did not complete", true
		case t != nil && t.OutputFormat != nil && !t.OutputFormat.hasField(f):
			return up, f, "the output_format of " + up + " declares no field " + f, true
		case fields == nil:
			return up, f, "the output of " + up + " is not a JSON object", true
		case t != nil && t.OutputFormat != nil:
		default:
			if _, found := fields[f]; !found {
				return up, f, "the output of " + up + " has no field " + f, true
			}
		}
	}
	return "", "", "", false
}

// Graph indexes w; build it once per execution, not once per question.
func (w *Workflow) Graph() *Graph {
	g := &Graph{byID: make(map[string]*Node, len(w.Nodes)), dependents: map[string][]*Node{}, order: make(map[string]int, len(w.Nodes)),
		reads: w.reads, fieldReads: w.fieldReads, byEnvName: make(map[string]string, len(w.Nodes))}
	for i, n := range w.Nodes {
		g.byID[n.ID], g.order[n.ID] = n, i
		g.byEnvName[OutputEnvName(n.ID)] = n.ID
	}
	for _, n := range w.Nodes {
		for _, d := range n.DependsOn {
			g.dependents[d] = append(g.dependents[d], n)
		}
	}
	return g
}

// Upstream is every node n depends on, directly or not: the nodes whose outputs n may read.
func (g *Graph) Upstream(n *Node) map[string]bool { return ancestors(n, g.byID) }

// Inputs are the upstream nodes whose outputs node n gets: its direct dependencies, the nodes its
// texts and `when` read ($x.output), and for a bash or script node any other upstream node whose
// variable its code names (TF_OUTPUT_X, TF_OUTPUT_X_FILE or TF_FIELD_X_F, even in a comment). A
// bash or script node gets exactly these as TF_OUTPUT_<NODE> (and TF_FIELD_) variables. Not every upstream node: a node at the end of a 1,000-node
// chain would start its shell with 2,000 variables, and exec and sh pay for each one. It costs
// O(dependencies + references + script), not O(ancestors), so a long chain stays flat.
func (g *Graph) Inputs(n *Node) map[string]bool {
	in := make(map[string]bool, len(n.DependsOn)+len(g.reads[n.ID]))
	for _, id := range n.DependsOn {
		in[id] = true
	}
	for _, id := range g.reads[n.ID] {
		in[id] = true
	}
	var up map[string]bool // only when the script names a node that is not a dependency
	for _, id := range g.namedInScript(n) {
		if in[id] || id == n.ID {
			continue
		}
		if up == nil {
			up = g.Upstream(n)
		}
		if up[id] { // a node that is not upstream may not have run yet: never passed
			in[id] = true
		}
	}
	return in
}

// namedInScript returns the nodes whose TF_OUTPUT_ or TF_FIELD_ variables the code of a bash or
// script node names.
func (g *Graph) namedInScript(n *Node) []string {
	script := n.Bash
	if n.Script != nil {
		script = n.Script.Code
	}
	var ids []string
	for {
		i := strings.Index(script, "TF_")
		if i < 0 {
			return ids
		}
		j := i + len("TF_")
		for j < len(script) && isUpperChar(script[j]) {
			j++
		}
		if id, ok := g.nodeOfEnvName(script[i:j]); ok {
			ids = append(ids, id)
		}
		script = script[j:]
	}
}

// nodeOfEnvName finds the node whose output, output file or field the variable name carries.
func (g *Graph) nodeOfEnvName(name string) (string, bool) {
	if id, ok := g.byEnvName[name]; ok {
		return id, true
	}
	if id, ok := g.byEnvName[strings.TrimSuffix(name, "_FILE")]; ok {
		return id, true
	}
	rest, ok := strings.CutPrefix(name, "TF_FIELD_")
	if !ok {
		return "", false
	}
	// TF_FIELD_<NODE>_<FIELD>: the longest node whose name is followed by '_' and a field.
	best, found := "", ""
	for env, id := range g.byEnvName {
		node := strings.TrimPrefix(env, "TF_OUTPUT_")
		if len(node) > len(best) && strings.HasPrefix(rest, node+"_") && len(rest) > len(node)+1 {
			best, found = node, id
		}
	}
	return found, found != ""
}

// Dependents are the nodes that list id in depends_on, in workflow order.
func (g *Graph) Dependents(id string) []*Node { return g.dependents[id] }

// IsSink reports whether no node depends on id: its output is part of the run's result.
func (g *Graph) IsSink(id string) bool { return len(g.dependents[id]) == 0 }

// Order is the node's position in the workflow file, which decides who starts first among nodes
// ready at once.
func (g *Graph) Order(id string) int { return g.order[id] }

// article is "an" before a vowel, else "a".
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}
