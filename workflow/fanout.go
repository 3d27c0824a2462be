package workflow

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// FanOut makes a `workflow:` node start one child run per item of a JSON list (Archon's
// `fan_out`): each item is its child's $ARGUMENTS, at most MaxParallel children are unfinished at
// once, and Join decides from the children's ends whether the node completes. The node's output
// is a JSON array of the children's outputs in item order (FanOutElement). See docs/workflows.md,
// "Fan-out".
type FanOut struct {
	Items       string // a JSON list, literally or through variables and $node.output (expanded when the node runs)
	MaxParallel int
	Join        FanOutJoin
	// FailedKey marks a child that did not complete in the node's output: Archon's
	// `archon_failed` in Archon's files, `failed` in ours.
	FailedKey string
}

// FanOutJoin is how a fan-out node's children's ends decide the node's.
type FanOutJoin string

// The joins, Archon's. Both wait until every child has ended: one child's end never stops another.
const (
	// JoinAllDone completes the node however its children ended; a child that did not complete
	// is an object {FailedKey: true, error, status} in the output.
	JoinAllDone FanOutJoin = "all_done"
	// JoinAllSuccess fails the node when a child failed or was cancelled, naming the first.
	JoinAllSuccess FanOutJoin = "all_success"
)

// Bounds of a fan-out. MaxFanOutItems bounds the child runs one node may start (Archon leaves the
// list unbounded; a list that a node's output decides must not start runs without end), and
// MaxParallel defaults to Archon's 5.
const (
	MaxFanOutItems         = 100
	DefaultFanOutParallel  = 5
	fanOutFailedKeyOurs    = "failed"
	fanOutFailedKeyArchons = "archon_failed"
)

var (
	fanOutFields = []string{"items", "max_parallel", "join"}
	fanOutJoins  = []string{string(JoinAllDone), string(JoinAllSuccess)}
)

// fanOut decodes `fan_out: {items, max_parallel, join}` of a workflow node. Archon's racing join
// `first_success` is refused as Archon refuses it.
func (d *decoder) fanOut(fs map[string]field, node *Node, m *nodeMeta) {
	f, ok := fs["fan_out"]
	if !ok {
		return
	}
	if node.Kind != "" && node.Kind != KindWorkflow {
		d.errorf(f.key, "`fan_out` starts one child run per item and applies only to workflow nodes; remove it from this %s node", node.Kind)
		return
	}
	if g, ok := fs["input"]; ok {
		d.errorf(g.key, "with `fan_out`, each child's $ARGUMENTS is its item; remove `input`")
	}
	fo := &FanOut{MaxParallel: DefaultFanOutParallel, Join: JoinAllDone, FailedKey: fanOutFailedKeyOurs}
	if d.archon {
		fo.FailedKey = fanOutFailedKeyArchons
	}
	gs := d.mapping(f.val, "`fan_out`", fanOutFields)
	if g, ok := gs["items"]; ok {
		fo.Items, _ = d.nonEmpty(g)
		m.texts = append(m.texts, text{"`fan_out.items`", g.val})
	} else if gs != nil {
		d.errorf(f.val, "fan_out has no `items`; add a JSON list, such as '[\"a\", \"b\"]' or \"$list.output\"")
	}
	if g, ok := gs["max_parallel"]; ok {
		if n, ok := d.integer(g); ok && (n < 1 || n > MaxFanOutItems) {
			d.errorf(g.val, "`fan_out.max_parallel` must be between 1 and %d, found %d", MaxFanOutItems, n)
		} else if ok {
			fo.MaxParallel = n
		}
	}
	if g, ok := gs["join"]; ok {
		if s, _ := d.str(g); s == "first_success" {
			d.errorf(g.val, "`fan_out.join: first_success` (a race whose winner cancels the others) is refused, as Archon refuses it; use all_done and pick in a node after it")
		} else if s, ok := d.oneOf(g, fanOutJoins); ok {
			fo.Join = FanOutJoin(s)
		}
	}
	node.FanOut = fo
}

// FanOutItems reads a fan-out's expanded `items`: a JSON list of at most MaxFanOutItems items,
// each becoming one child's $ARGUMENTS (a string as it is, anything else as its JSON text).
func FanOutItems(expanded string) ([]string, error) {
	var list []json.RawMessage
	if err := json.Unmarshal([]byte(expanded), &list); err != nil || list == nil {
		return nil, fmt.Errorf("`fan_out.items` is not a JSON list: %s", describeJSON(expanded, err))
	}
	if len(list) > MaxFanOutItems {
		return nil, fmt.Errorf("`fan_out.items` has %d items, more than the %d child runs one node may start; shorten the list", len(list), MaxFanOutItems)
	}
	out := make([]string, len(list))
	for i, raw := range list {
		var s string
		if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
			out[i] = s
			continue
		}
		out[i] = compactJSON(raw)
	}
	return out, nil
}

// describeJSON says what a text that is not a JSON list is, quoting at most its start.
func describeJSON(s string, err error) string {
	const shown = 80
	q := s
	if len(q) > shown {
		q = q[:shown] + "…"
	}
	if err != nil {
		return fmt.Sprintf("%q (%v)", q, err)
	}
	return fmt.Sprintf("%q is null", q)
}

func compactJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	return string(jsonText(v))
}

// FanOutElement is one child's place in a fan-out node's output: a completed child's output (the
// JSON object or list itself when its output is one, as Archon keeps a structured child's answer,
// else its text), or, for a child that failed or was cancelled, {failedKey: true, error, status}.
func FanOutElement(completed bool, output, status, errMsg, failedKey string) json.RawMessage {
	if !completed {
		return jsonText(map[string]any{failedKey: true, "error": errMsg, "status": status})
	}
	var v any
	if json.Unmarshal([]byte(output), &v) == nil {
		switch v.(type) {
		case map[string]any, []any:
			return jsonText(v)
		}
	}
	return jsonText(output)
}

// jsonText is v as compact JSON, with <, > and & as they are (they are not in HTML), so that a
// script searching the output for a child's text finds it.
func jsonText(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return json.RawMessage("null")
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
