package workflow

// KindWorkflow starts a run of another workflow, a child run (`workflow: NAME`), and waits for it:
// the child's final output is the node's output, and the child failing or being cancelled fails
// the node. The child's $ARGUMENTS are the node's `input` (variables expanded), or the parent's
// arguments without one. See docs/workflows.md, "Child runs".
const KindWorkflow Kind = "workflow"

// MaxChildDepth bounds how deep runs may nest (a parent's child's child...): two workflows that
// start each other would otherwise start runs without end.
const MaxChildDepth = 5

// childWorkflow decodes `workflow: NAME`, the name of the workflow a child run runs, and its
// `input`.
func (d *decoder) childWorkflow(fs map[string]field, f field, node *Node, m *nodeMeta) {
	if g, ok := fs["input"]; ok {
		node.ChildInput, _ = d.str(g)
		node.HasChildInput = true
		m.texts = append(m.texts, text{"`input`", g.val})
	}
	name, ok := d.id(f)
	if !ok {
		return
	}
	if d.wfName != "" && name == d.wfName {
		d.errorf(f.val, "%s starts its own workflow `%s`, which would start runs without end; name another workflow", node.label(), name)
		return
	}
	node.Workflow = name
}

// childInputOnly refuses `input` on a node that starts no child run.
func (d *decoder) childInputOnly(fs map[string]field, node *Node) {
	if f, ok := fs["input"]; ok && node.Kind != "" && node.Kind != KindWorkflow {
		d.errorf(f.key, "`input` is the $ARGUMENTS of a child run and applies only to workflow nodes; remove it from this %s node", node.Kind)
	}
}
