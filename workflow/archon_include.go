package workflow

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// expandIncludes replaces each `include: <workflow>` node by the included workflow's nodes, as
// Archon does when it loads a file: each included node n becomes <include-id>__<n>, its internal
// depends_on and $n.output are renamed, its entry nodes take the include node's depends_on, when
// and trigger_rule, and the rest of the file's depends_on [include-id] waits on the block's sinks
// while $include-id.output reads its primary sink (the block's `returns:`, else its first sink).
// An include that cannot be found is left in place for the decoder to refuse.
func (a *archonDecoder) expandIncludes(items []*yaml.Node, depth int) []*yaml.Node {
	out := make([]*yaml.Node, 0, len(items))
	sinks := map[string][]string{} // include id -> its block's sinks
	primary := map[string]string{} // include id -> the node its output is
	for _, n := range items {
		id, target, ok := archonInclude(n)
		src, found := a.bundle.Includes[target]
		if !ok || !found || depth >= archonIncludeDepth {
			out = append(out, n)
			continue
		}
		block, returns := a.blockNodes(src, depth)
		if len(block) == 0 {
			out = append(out, n)
			continue
		}
		s, p := namespaceBlock(block, id, n, returns)
		sinks[id], primary[id] = s, p
		for _, b := range block {
			if _, nested := a.fileOf[b]; !nested {
				a.fileOf[b] = a.bundle.Files[target]
			}
		}
		out = append(out, block...)
	}
	if len(sinks) == 0 {
		return out
	}
	for _, n := range out {
		rewriteIncludeRefs(n, sinks, primary)
	}
	return out
}

// archonInclude reads an include node's id and target.
func archonInclude(n *yaml.Node) (id, target string, ok bool) {
	var raw struct {
		ID      string `yaml:"id"`
		Include string `yaml:"include"`
	}
	if n.Kind != yaml.MappingNode || n.Decode(&raw) != nil || raw.Include == "" || !validID(raw.ID) {
		return "", "", false
	}
	return raw.ID, raw.Include, true
}

// blockNodes parses an included workflow and expands its own includes.
func (a *archonDecoder) blockNodes(src string, depth int) (nodes []*yaml.Node, returns string) {
	var doc yaml.Node
	if yaml.Unmarshal([]byte(src), &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, ""
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch root.Content[i].Value {
		case "nodes":
			if root.Content[i+1].Kind == yaml.SequenceNode {
				nodes = root.Content[i+1].Content
			}
		case "returns":
			returns = root.Content[i+1].Value
		}
	}
	return a.expandIncludes(nodes, depth+1), returns
}

// namespaceBlock renames the block's nodes under the include id and attaches the include node's
// graph fields to its entry nodes. It returns the block's sinks and primary sink, renamed.
func namespaceBlock(block []*yaml.Node, id string, inc *yaml.Node, returns string) (sinks []string, primary string) {
	ids := map[string]bool{}
	for _, b := range block {
		bid, _ := archonIDAndDeps(b)
		ids[bid] = true
	}
	used := map[string]bool{}
	rename := func(s string) string { return id + "__" + s }
	for _, b := range block {
		_, deps := archonIDAndDeps(b)
		entry := true
		for _, d := range deps {
			if ids[d] {
				entry, used[d] = false, true
			}
		}
		renameNode(b, ids, rename)
		if entry {
			attachIncludeFields(b, inc)
		}
	}
	for _, b := range block {
		bid, _ := archonIDAndDeps(b)
		orig := strings.TrimPrefix(bid, id+"__")
		if !used[orig] {
			sinks = append(sinks, bid)
		}
	}
	primary = sinks[0]
	if returns != "" && ids[returns] {
		primary = rename(returns)
	}
	return sinks, primary
}

// renameNode renames a block node's id, its internal depends_on and its $id.output references.
func renameNode(b *yaml.Node, ids map[string]bool, rename func(string) string) {
	for i := 0; i+1 < len(b.Content); i += 2 {
		k, v := b.Content[i].Value, b.Content[i+1]
		switch {
		case k == "id":
			v.Value = rename(v.Value)
		case k == "depends_on" && v.Kind == yaml.SequenceNode:
			for _, d := range v.Content {
				if ids[d.Value] {
					d.Value = rename(d.Value)
				}
			}
		default:
			renameRefs(v, func(node string) (string, bool) {
				if ids[node] {
					return rename(node), true
				}
				return "", false
			})
		}
	}
}

// attachIncludeFields gives an entry node of a block the include node's depends_on, when and
// trigger_rule.
func attachIncludeFields(b, inc *yaml.Node) {
	for i := 0; i+1 < len(inc.Content); i += 2 {
		k := inc.Content[i].Value
		if k != "depends_on" && k != "when" && k != "trigger_rule" {
			continue
		}
		replaced := false
		for j := 0; j+1 < len(b.Content); j += 2 {
			if b.Content[j].Value == k {
				b.Content[j+1], replaced = inc.Content[i+1], true
			}
		}
		if !replaced {
			b.Content = append(b.Content, inc.Content[i], inc.Content[i+1])
		}
	}
}

// rewriteIncludeRefs points the rest of the file at the blocks: depends_on [include-id] becomes
// its sinks, $include-id.output its primary sink.
func rewriteIncludeRefs(n *yaml.Node, sinks map[string][]string, primary map[string]string) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		if k == "depends_on" && v.Kind == yaml.SequenceNode {
			var deps []*yaml.Node
			for _, d := range v.Content {
				if s, ok := sinks[d.Value]; ok {
					for _, id := range s {
						deps = append(deps, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: id, Line: d.Line, Column: d.Column})
					}
					continue
				}
				deps = append(deps, d)
			}
			v.Content = deps
			continue
		}
		if k == "id" {
			continue
		}
		renameRefs(v, func(node string) (string, bool) {
			p, ok := primary[node]
			return p, ok
		})
	}
}

// renameRefs rewrites $node.output and ${node.output} in every scalar below v.
func renameRefs(v *yaml.Node, to func(node string) (string, bool)) {
	if v.Kind != yaml.ScalarNode {
		for _, c := range v.Content {
			renameRefs(c, to)
		}
		return
	}
	src := v.Value
	var b strings.Builder
	last := 0
	eachRef(src, func(start int, r ref) {
		if r.node == "" {
			return
		}
		name, ok := to(r.node)
		if !ok {
			return
		}
		b.WriteString(src[last:start])
		b.WriteString(strings.Replace(src[start:r.end], r.node, name, 1))
		last = r.end
	})
	if last == 0 {
		return
	}
	b.WriteString(src[last:])
	v.Value = b.String()
}
