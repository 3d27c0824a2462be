package workflow

import (
	"strings"

	"gopkg.in/yaml.v3"
)

var (
	nodeFields   = []string{"id", "depends_on", "when", "trigger_rule", "timeout", "retry", "continue_on_error", "bash", "prompt", "provider", "model", "context", "permissions", "max_cost_usd", "approval", "loop", "on_timeout", "remind_after", "script", "runtime", "packages", "output_format", "workflow", "input", "fan_out"}
	kindFields   = []string{string(KindBash), string(KindPrompt), string(KindApproval), string(KindLoop), string(KindScript), string(KindWorkflow)}
	retryFields  = []string{"max_attempts", "delay", "on"}
	loopFields   = []string{"prompt", "until", "max_iterations", "fresh_context", "interactive", "gate_message"}
	triggerRules = []string{string(AllSuccess), string(OneSuccess), string(NoneFailedMinOneSuccess), string(AllDone)}
	providers    = []string{"claude", "codex"}
	contextModes = []string{string(ContextFresh), string(ContextShared)}
	permissions  = []string{string(PermRead), string(PermEdit), string(PermFull)}
	retryOns     = []string{string(RetryTransient), string(RetryAll)}
)

// maxLoopIterations caps a loop so that a typo cannot start an unbounded AI session.
const maxLoopIterations = 100

// nodeMeta keeps the YAML positions the graph checks need after decoding.
type nodeMeta struct {
	id    *yaml.Node
	deps  []*yaml.Node
	when  *yaml.Node
	texts []text // scalars whose $node.output references must name upstream nodes
}

// text is a scalar that may reference outputs, with the name of its field for messages.
type text struct {
	field string
	val   *yaml.Node
}

// node decodes one entry of `nodes`. It returns nil when the node has no usable id, because the
// graph checks cannot refer to it.
func (d *decoder) node(n *yaml.Node) *Node {
	fs := d.mapping(n, "a node", nodeFields)
	if fs == nil {
		return nil
	}
	node := &Node{Line: n.Line, Col: n.Column, TriggerRule: AllSuccess, Retry: Retry{MaxAttempts: 1}}
	m := &nodeMeta{}
	idOK := false
	if f, ok := fs["id"]; ok {
		node.ID, idOK = d.id(f)
		m.id = f.val
	} else {
		d.errorf(n, "node has no `id`; add `id: <name>` so other nodes can depend on it")
	}
	// Decode the rest even without a usable id, so that all of the node's problems are reported.
	d.common(fs, node, m)
	d.kind(fs, n, node, m)
	d.agentFields(fs, node)
	d.scriptAndFormat(fs, node)
	d.childInputOnly(fs, node)
	d.fanOut(fs, node, m)
	if node.Retry.On == "" {
		node.Retry.On = node.Kind.DefaultRetryOn()
	}
	return d.keep(node, m, idOK)
}

// keep records what the checks after decoding need of node (m) and returns it, or nil when its
// id was refused: a node without a usable id is reported but not kept. Both formats' nodes end here.
func (d *decoder) keep(node *Node, m *nodeMeta, idOK bool) *Node {
	if !idOK {
		return nil
	}
	if d.meta == nil {
		d.meta = map[*Node]*nodeMeta{}
	}
	d.meta[node] = m
	return node
}

// common decodes the fields every kind shares.
func (d *decoder) common(fs map[string]field, node *Node, m *nodeMeta) {
	if f, ok := fs["depends_on"]; ok {
		node.DependsOn, m.deps = d.deps(f)
	}
	if f, ok := fs["when"]; ok {
		node.When = d.when(f)
		m.when = f.val
	}
	if f, ok := fs["trigger_rule"]; ok {
		if s, ok := d.oneOf(f, triggerRules); ok {
			node.TriggerRule = TriggerRule(s)
		}
	}
	_, gate := fs["approval"]
	for _, key := range []string{"on_timeout", "remind_after"} {
		if f, ok := fs[key]; ok && !gate {
			d.errorf(f.key, "`%s` applies only to approval nodes, where it belongs inside `approval:`; remove it", key)
		}
	}
	if f, ok := fs["timeout"]; ok && !gate { // an approval's timeout is how long its gate waits
		if t, ok := d.duration(f); ok && t == 0 {
			d.errorf(f.val, "`timeout` must be more than zero; remove it for no node timeout")
		} else {
			node.Timeout = t
		}
	}
	if f, ok := fs["retry"]; ok {
		d.retry(f, &node.Retry)
	}
	if f, ok := fs["continue_on_error"]; ok {
		node.ContinueOnError = d.boolean(f)
	}
}

func (d *decoder) deps(f field) ([]string, []*yaml.Node) {
	if f.val.Kind != yaml.SequenceNode {
		d.errorf(f.val, "`depends_on` must be a list like [build, test], found %s", describe(f.val))
		return nil, nil
	}
	var ids []string
	var at []*yaml.Node
	for _, item := range f.val.Content {
		id, ok := d.id(field{f.key, item})
		switch {
		case !ok:
		case contains(ids, id):
			d.errorf(item, "`%s` is listed twice in depends_on; remove one", id)
		default:
			ids, at = append(ids, id), append(at, item)
		}
	}
	return ids, at
}

func (d *decoder) when(f field) *Expr {
	s, ok := d.str(f)
	if !ok {
		return nil
	}
	e, perr := parseExpr(s)
	if perr != nil {
		line, col := d.posIn(f.val, perr.off)
		d.errorAt(line, col, "invalid `when`: %s", perr.msg)
		return nil
	}
	return e
}

func (d *decoder) retry(f field, r *Retry) {
	fs := d.mapping(f.val, "`retry`", retryFields)
	if g, ok := fs["max_attempts"]; ok {
		if n, ok := d.integer(g); ok && n < 1 {
			d.errorf(g.val, "`max_attempts` counts the first try and must be at least 1, found %d", n)
		} else if ok {
			r.MaxAttempts = n
		}
	}
	if g, ok := fs["delay"]; ok {
		r.Delay, _ = d.duration(g)
	}
	if g, ok := fs["on"]; ok {
		if s, ok := d.oneOf(g, retryOns); ok {
			r.On = RetryOn(s)
		}
	}
}

// kind finds the one kind field of the node and decodes it.
func (d *decoder) kind(fs map[string]field, n *yaml.Node, node *Node, m *nodeMeta) {
	var present []field
	for i := 0; i+1 < len(n.Content); i += 2 {
		if f, ok := fs[n.Content[i].Value]; ok && f.key == n.Content[i] && contains(kindFields, f.key.Value) {
			present = append(present, f)
		}
	}
	switch len(present) {
	case 0:
		d.errorf(n, "%s does nothing; add exactly one of: %s", node.label(), strings.Join(kindFields, ", "))
		return
	case 1:
	default:
		names := make([]string, len(present))
		for i, f := range present {
			names[i] = "`" + f.key.Value + "`"
		}
		d.errorf(present[1].key, "%s has %s; a node has exactly one kind, split it into separate nodes", node.label(), strings.Join(names, " and "))
		return
	}
	f := present[0]
	node.Kind = Kind(f.key.Value)
	switch node.Kind {
	case KindBash:
		node.Bash, _ = d.nonEmpty(f)
		m.texts = append(m.texts, text{"`bash`", f.val})
	case KindPrompt:
		node.Prompt, _ = d.nonEmpty(f)
		m.texts = append(m.texts, text{"`prompt`", f.val})
	case KindApproval:
		node.Approval = d.approval(f, m)
		d.gateTimerFields(fs, node.Approval)
	case KindLoop:
		node.Loop = d.loop(f, m)
	case KindScript:
		node.Script = d.script(fs, f, node)
	case KindWorkflow:
		d.childWorkflow(fs, f, node, m)
	}
}

func (d *decoder) loop(f field, m *nodeMeta) *Loop {
	l := &Loop{}
	fs := d.mapping(f.val, "`loop`", loopFields)
	if fs == nil {
		return l
	}
	if g, ok := fs["prompt"]; ok {
		l.Prompt, _ = d.nonEmpty(g)
		m.texts = append(m.texts, text{"`loop.prompt`", g.val})
	} else {
		d.errorf(f.val, "loop has no `prompt`; add the text each iteration sends")
	}
	if g, ok := fs["until"]; ok {
		l.Until, _ = d.nonEmpty(g)
	}
	if g, ok := fs["max_iterations"]; !ok {
		d.errorf(f.val, "loop has no `max_iterations`; add `max_iterations: <1..%d>` so it cannot run forever", maxLoopIterations)
	} else if n, ok := d.integer(g); ok && (n < 1 || n > maxLoopIterations) {
		d.errorf(g.val, "`max_iterations` must be between 1 and %d, found %d", maxLoopIterations, n)
	} else {
		l.MaxIterations = n
	}
	if g, ok := fs["fresh_context"]; ok {
		l.FreshContext = d.boolean(g)
	}
	if g, ok := fs["interactive"]; ok {
		l.Interactive = d.boolean(g)
	}
	if g, ok := fs["gate_message"]; ok {
		l.GateMessage, _ = d.str(g)
		m.texts = append(m.texts, text{"`loop.gate_message`", g.val})
	}
	return l
}

// agentFields decodes provider, model, context, permissions and max_cost_usd, which only AI nodes
// accept.
func (d *decoder) agentFields(fs map[string]field, node *Node) {
	node.Context = ContextFresh
	ai := node.Kind == KindPrompt || node.Kind == KindLoop
	for _, key := range []string{"provider", "model", "context", "permissions", "max_cost_usd"} {
		f, ok := fs[key]
		if !ok {
			continue
		}
		switch {
		case node.Kind != "" && !ai:
			d.errorf(f.key, "`%s` applies only to prompt and loop nodes; remove it from this %s node", key, node.Kind)
		case key == "context" && node.Kind == KindLoop:
			d.errorf(f.key, "a loop node sets its context with `loop.fresh_context`; remove `context`")
		case key == "provider":
			node.Provider, _ = d.oneOf(f, providers)
		case key == "model":
			node.Model, _ = d.nonEmpty(f)
		case key == "context":
			if s, ok := d.oneOf(f, contextModes); ok {
				node.Context = ContextMode(s)
			}
		case key == "permissions":
			if s, ok := d.oneOf(f, permissions); ok {
				node.Permissions = Permissions(s)
			}
		case key == "max_cost_usd":
			node.MaxCostNanos = d.maxCost(f)
		}
	}
}

// label names a node in messages, including one whose id is missing.
func (n *Node) label() string {
	if n.ID == "" {
		return "this node"
	}
	return "node `" + n.ID + "`"
}
