package workflow

import (
	"strings"
	"testing"
)

// fan_out decodes on workflow nodes of our YAML, with Archon's defaults, and its mistakes are
// reported where they are.
func TestFanOutDecodes(t *testing.T) {
	t.Parallel()
	w, err := Parse("wf.yaml", []byte("name: x\nnodes:\n  - id: list\n    bash: echo '[1]'\n  - id: each\n    depends_on: [list]\n    workflow: other\n    fan_out:\n      items: $list.output\n"))
	if err != nil {
		t.Fatal(err)
	}
	fo := w.Node("each").FanOut
	if fo == nil || fo.Items != "$list.output" || fo.MaxParallel != DefaultFanOutParallel || fo.Join != JoinAllDone || fo.FailedKey != "failed" {
		t.Fatalf("fan_out = %+v", fo)
	}
	if in := w.Graph().Inputs(w.Node("each")); !in["list"] {
		t.Errorf("each does not read list: %v", in)
	}
	for name, tc := range map[string]struct{ node, want string }{
		"not a workflow node": {"    bash: echo\n    fan_out: {items: '[]'}\n", "`fan_out` starts one child run per item and applies only to workflow nodes"},
		"with input":          {"    workflow: other\n    input: hi\n    fan_out: {items: '[]'}\n", "with `fan_out`, each child's $ARGUMENTS is its item; remove `input`"},
		"no items":            {"    workflow: other\n    fan_out: {join: all_done}\n", "fan_out has no `items`"},
		"racing":              {"    workflow: other\n    fan_out: {items: '[]', join: first_success}\n", "`fan_out.join: first_success` (a race whose winner cancels the others) is refused"},
		"too parallel":        {"    workflow: other\n    fan_out: {items: '[]', max_parallel: 101}\n", "`fan_out.max_parallel` must be between 1 and 100, found 101"},
		"unknown upstream":    {"    workflow: other\n    fan_out: {items: $nope.output}\n", "nope"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("wf.yaml", []byte("name: x\nnodes:\n  - id: n\n"+tc.node))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to say %q", err, tc.want)
			}
		})
	}
}

// A fan-out's items are checked when the node runs: a JSON list of at most MaxFanOutItems, each
// item a child's $ARGUMENTS (strings as they are, anything else as JSON).
func TestFanOutItems(t *testing.T) {
	t.Parallel()
	got, err := FanOutItems(`["a", 2, {"k": "<v>"}, null]`)
	if err != nil || strings.Join(got, "|") != `a|2|{"k":"<v>"}|null` {
		t.Errorf("items = %q, %v", got, err)
	}
	for _, bad := range []string{"a, b", `{"a": 1}`, "null", ""} {
		if _, err := FanOutItems(bad); err == nil || !strings.Contains(err.Error(), "is not a JSON list") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	long := "[" + strings.Repeat("1,", MaxFanOutItems) + "1]"
	if _, err := FanOutItems(long); err == nil || !strings.Contains(err.Error(), "more than the 100 child runs one node may start") {
		t.Errorf("101 items: %v", err)
	}
	if got := string(FanOutElement(true, `{"v": 1}`, "completed", "", "failed")); got != `{"v":1}` {
		t.Errorf("a JSON child's element = %s", got)
	}
	if got := string(FanOutElement(true, "a & b", "completed", "", "failed")); got != `"a & b"` {
		t.Errorf("a text child's element = %s", got)
	}
	if got := string(FanOutElement(false, "", "cancelled", "child cancelled", "archon_failed")); got != `{"archon_failed":true,"error":"child cancelled","status":"cancelled"}` {
		t.Errorf("a cancelled child's element = %s", got)
	}
}

// Archon's workflow:, input, fan_out, cancel and always_run translate onto our nodes.
func TestArchonSubRunsCancelAndAlwaysRunTranslate(t *testing.T) {
	t.Parallel()
	dir := archonRepoFS(t, map[string]string{".archon/workflows/x.yaml": `name: x
description: d
nodes:
  - id: list
    bash: echo '["a"]'
    always_run: true
  - id: one
    workflow: child
    input: "$USER_MESSAGE and $list.output"
    depends_on: [list]
  - id: bare
    workflow: child
  - id: each
    workflow: child
    depends_on: [list]
    fan_out: {items: "$list.output", max_parallel: 2, join: all_success}
  - id: stop
    depends_on: [list]
    cancel: "stopped at $list.output"
`})
	cat, errs := Discover("", []string{dir})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	w, _ := cat.Get("x")
	list, one, bare, each, stop := w.Node("list"), w.Node("one"), w.Node("bare"), w.Node("each"), w.Node("stop")
	if !list.AlwaysRun || one.AlwaysRun {
		t.Errorf("always_run: list %v, one %v", list.AlwaysRun, one.AlwaysRun)
	}
	if one.Kind != KindWorkflow || one.Workflow != "child" || !one.HasChildInput || one.ChildInput != "$ARGUMENTS and $list.output" {
		t.Errorf("one = %+v", one)
	}
	if !bare.HasChildInput || bare.ChildInput != "" {
		t.Errorf("a sub-run without input gets the parent's arguments: %+v; Archon gives it none", bare)
	}
	if fo := each.FanOut; fo == nil || fo.MaxParallel != 2 || fo.Join != JoinAllSuccess || fo.FailedKey != "archon_failed" {
		t.Errorf("each's fan_out = %+v", fo)
	}
	if stop.Kind != KindCancel || stop.CancelReason != "stopped at $list.output" || !w.Graph().Inputs(stop)["list"] {
		t.Errorf("stop = %+v", stop)
	}
}
