package workflow

import (
	"fmt"
	"path"
	"strings"

	"gopkg.in/yaml.v3"
)

// archonAlwaysRefused are node fields refused wherever they appear.
var archonAlwaysRefused = []string{"skills", "agents", "mcp", "pi", "thinking", "maxBudgetUsd", "systemPrompt",
	"fallbackModel", "settingSources", "betas", "sandbox", "persist_session", "isolation", "with", "deps"}

// node translates one Archon node. It returns nil when the node has no usable id.
func (a *archonDecoder) node(n *yaml.Node) *Node {
	fs := a.mapping(n, "a node", archonNodeFields)
	if fs == nil {
		return nil
	}
	node := &Node{Line: n.Line, Col: n.Column, TriggerRule: AllSuccess, Retry: Retry{MaxAttempts: 1}, Context: ContextFresh}
	m := &nodeMeta{}
	idOK := false
	if f, ok := fs["id"]; ok {
		node.ID, idOK = a.id(f)
		m.id = f.val
	} else {
		a.errorf(n, "node has no `id`; add `id: <name>` so other nodes can depend on it")
	}
	for _, key := range archonAlwaysRefused {
		if f, ok := fs[key]; ok {
			a.refuse(f.key, key)
		}
	}
	a.graphFields(fs, node, m)
	a.kind(fs, n, node, m)
	a.fanOut(fs, node, m)
	if f, ok := fs["input"]; ok && node.Kind != "" && node.Kind != KindWorkflow {
		a.errorf(f.key, "`input` is the $ARGUMENTS of a sub-run and applies only to workflow nodes; remove it from this %s node", node.Kind)
	}
	if f, ok := fs["always_run"]; ok {
		node.AlwaysRun = a.boolean(f)
	}
	a.agentFields(fs, node)
	a.execFields(fs, node)
	if f, ok := fs["output_type"]; ok {
		node.OutputType, _ = a.nonEmpty(f)
	}
	if f, ok := fs["output_format"]; ok {
		node.OutputFormat = a.outputFormat(f, node)
	}
	if f, ok := fs["runtime"]; ok && node.Kind != KindScript && node.Kind != "" {
		a.errorf(f.key, "`runtime` applies only to script nodes; remove it from this %s node", node.Kind)
	}
	return a.keep(node, m, idOK)
}

// graphFields decodes depends_on, when and trigger_rule as our decoder does.
func (a *archonDecoder) graphFields(fs map[string]field, node *Node, m *nodeMeta) {
	if f, ok := fs["depends_on"]; ok {
		node.DependsOn, m.deps = a.deps(f)
	}
	if f, ok := fs["when"]; ok {
		s, ok := a.str(f)
		switch {
		case !ok:
		case archonNumericWhen(s):
			a.refuse(f.key, "when")
		default:
			node.When = a.when(f)
			m.when = f.val
		}
	}
	if f, ok := fs["trigger_rule"]; ok {
		if s, ok := a.oneOf(f, triggerRules); ok {
			node.TriggerRule = TriggerRule(s)
		}
	}
}

// archonNumericWhen reports whether a condition that is not ours uses Archon's numeric comparisons
// (<, >, <=, >=), which Threadflow's `when` does not have.
func archonNumericWhen(s string) bool {
	if _, err := parseExpr(s); err == nil {
		return false
	}
	var quote byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
		case c == '\'' || c == '"':
			quote = c
		case c == '<' || c == '>':
			return true
		}
	}
	return false
}

// kind finds the node's one kind and translates it.
func (a *archonDecoder) kind(fs map[string]field, n *yaml.Node, node *Node, m *nodeMeta) {
	var present []field
	for i := 0; i+1 < len(n.Content); i += 2 {
		if f, ok := fs[n.Content[i].Value]; ok && f.key == n.Content[i] && contains(archonKinds, f.key.Value) {
			present = append(present, f)
		}
	}
	if len(present) != 1 {
		if len(present) == 0 {
			a.errorf(n, "%s does nothing; add exactly one of: %s", node.label(), strings.Join(archonKinds, ", "))
		} else {
			a.errorf(present[1].key, "%s has `%s` and `%s`; a node has exactly one kind", node.label(), present[0].key.Value, present[1].key.Value)
		}
		return
	}
	f := present[0]
	switch f.key.Value {
	case "bash":
		node.Kind, node.Shell = KindBash, "bash"
		node.Bash = a.bashText(f)
		m.texts = append(m.texts, text{"`bash`", f.val})
	case "prompt":
		node.Kind = KindPrompt
		node.Prompt = a.promptText(f)
		m.texts = append(m.texts, text{"`prompt`", f.val})
	case "command":
		node.Kind = KindPrompt
		if v := a.commandText(f); v != nil {
			node.Prompt = v.Value
			m.texts = append(m.texts, text{"`command`", v})
		}
	case "approval":
		node.Kind = KindApproval
		node.Approval = a.approval(f, m)
	case "loop":
		node.Kind = KindLoop
		node.Loop = a.loop(f, m)
	case "loop_group":
		node.Kind, node.Shell = KindBash, "bash"
		node.Bash = a.loopGroup(f, node.ID, m)
	case "include":
		a.refuse(f.key, "include") // expandIncludes replaced every include it could find
	case "script":
		node.Kind = KindScript
		node.Script = a.script(fs, f, node, m)
	case "workflow":
		node.Kind = KindWorkflow
		a.subRun(fs, f, node, m)
	case "cancel":
		node.Kind = KindCancel
		node.CancelReason = a.promptText(f)
		m.texts = append(m.texts, text{"`cancel`", f.val})
	}
}

// subRun translates a `workflow:` node onto a child run. Its `input` is the child's $ARGUMENTS
// with Archon's variables mapped; without one, as in Archon, the child's $ARGUMENTS are empty
// (where a node of ours passes the parent's arguments on).
func (a *archonDecoder) subRun(fs map[string]field, f field, node *Node, m *nodeMeta) {
	rest := map[string]field{}
	if g, ok := fs["input"]; ok && fs["fan_out"].key == nil {
		if _, ok := a.str(g); ok {
			v := *g.val
			v.Value = a.mapVars(g, false)
			rest["input"] = field{g.key, &v}
		}
	}
	a.childWorkflow(rest, f, node, m)
	node.HasChildInput = true
}

// fanOut decodes `fan_out` as our decoder does, with Archon's variables mapped in `items`.
func (a *archonDecoder) fanOut(fs map[string]field, node *Node, m *nodeMeta) {
	a.decoder.fanOut(fs, node, m)
	if node.FanOut == nil || node.FanOut.Items == "" {
		return
	}
	v := fs["fan_out"].val
	for i := 0; i+1 < len(v.Content); i += 2 { // decoded above, so a mapping with a string `items`
		if v.Content[i].Value == "items" {
			node.FanOut.Items = a.mapVars(field{v.Content[i], v.Content[i+1]}, false)
		}
	}
}

// commandText is the prompt of a `command:` node: the command file's text as it was frozen, with
// Archon's variables mapped. The returned scalar sits where `command:` is written, so a message
// about the prompt points there.
func (a *archonDecoder) commandText(f field) *yaml.Node {
	name, ok := a.nonEmpty(f)
	if !ok {
		return nil
	}
	body, found := a.bundle.Commands[name]
	if !found {
		a.refuse(f.val, "command")
		return nil
	}
	if strings.TrimSpace(body) == "" {
		a.errorf(f.val, "command file `%s.md` is empty; write the prompt in it", name)
		return nil
	}
	v := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: body, Line: f.val.Line, Column: f.val.Column, Style: yaml.FoldedStyle}
	v.Value = a.mapVars(field{f.key, v}, false)
	return v
}

// promptText is an inline prompt with Archon's variables mapped.
func (a *archonDecoder) promptText(f field) string {
	if _, ok := a.nonEmpty(f); !ok {
		return ""
	}
	return a.mapVars(f, false)
}

// bashText is a bash script with Archon's variables mapped.
func (a *archonDecoder) bashText(f field) string {
	if _, ok := a.nonEmpty(f); !ok {
		return ""
	}
	return a.mapVars(f, true)
}

// archonRuntimes are Archon's script runtimes and the extensions of the named scripts each runs.
var archonRuntimes = map[string][]string{"bun": {".ts", ".js"}, "uv": {".py"}}

// script translates a script node: inline code, or the name of a script of .archon/scripts as it
// was frozen with the run. Archon pastes values into inline code; here that is refused, since a
// value would become code (values reach scripts in the environment).
func (a *archonDecoder) script(fs map[string]field, f field, node *Node, m *nodeMeta) *Script {
	code, ok := a.nonEmpty(f)
	if !ok {
		return nil
	}
	g, ok := fs["runtime"]
	if !ok {
		a.errorf(f.key, "%s has no `runtime`; Archon runs scripts with bun or uv: add `runtime: bun` or `runtime: uv`", node.label())
		return nil
	}
	rt, ok := a.oneOf(g, []string{"bun", "uv"})
	if !ok {
		return nil
	}
	if archonScriptName(code) {
		sc, found := a.bundle.Scripts[code]
		if !found || !contains(archonRuntimes[rt], path.Ext(sc.File)) {
			a.refuse(f.val, "script file")
			return nil
		}
		return &Script{Code: sc.Code, Runtime: Runtime(rt)}
	}
	m.texts = append(m.texts, text{"`script`", f.val})
	pasted := false
	eachRef(code, func(_ int, r ref) {
		if _, ours := (Vars{}).lookup(r.name); r.node != "" || ours || archonRenamed[r.name] != "" {
			pasted = true
		}
	})
	if pasted {
		a.refuse(f.key, "script values")
	}
	return &Script{Code: code, Runtime: Runtime(rt)}
}

// approval translates Archon's approval: a message, and optionally the answer as the output.
func (a *archonDecoder) approval(f field, m *nodeMeta) *Approval {
	ap := &Approval{OnTimeout: TimeoutReject}
	ap.Policy.AllowSelfApproval = true
	fs := a.mapping(f.val, "`approval`", []string{"message", "capture_response", "decisions", "on_reject"})
	for _, key := range []string{"decisions", "on_reject"} {
		if g, ok := fs[key]; ok {
			a.refuse(g.key, key)
		}
	}
	if g, ok := fs["message"]; ok {
		ap.Message = a.promptText(g)
		m.texts = append(m.texts, text{"`approval.message`", g.val})
	} else if fs != nil {
		a.errorf(f.val, "approval has no `message`; Archon requires one: write what the person is asked")
	}
	if g, ok := fs["capture_response"]; ok {
		ap.CaptureResponse = a.boolean(g)
	}
	return ap
}

// loop translates Archon's loop node.
func (a *archonDecoder) loop(f field, m *nodeMeta) *Loop {
	l := &Loop{ArchonSignal: true}
	fs := a.mapping(f.val, "`loop`", []string{"prompt", "command", "until", "until_bash", "until_field",
		"signal_completes", "max_iterations", "fresh_context", "interactive", "gate_message"})
	if fs == nil {
		return l
	}
	for _, key := range []string{"until_field", "signal_completes"} {
		if g, ok := fs[key]; ok {
			a.refuse(g.key, key)
		}
	}
	switch g, ok := fs["prompt"]; {
	case ok:
		l.Prompt = a.promptText(g)
		m.texts = append(m.texts, text{"`loop.prompt`", g.val})
	case fs["command"].key != nil:
		if v := a.commandText(fs["command"]); v != nil {
			l.Prompt = v.Value
			m.texts = append(m.texts, text{"`loop.command`", v})
		}
	default:
		a.errorf(f.val, "loop has no `prompt` or `command`; add the text each iteration sends")
	}
	if g, ok := fs["until"]; ok {
		l.Until, _ = a.nonEmpty(g)
	}
	if g, ok := fs["until_bash"]; ok {
		l.UntilBash = a.bashText(g)
		m.texts = append(m.texts, text{"`loop.until_bash`", g.val})
	}
	if l.Until == "" && l.UntilBash == "" && fs["until_field"].key == nil && fs["signal_completes"].key == nil {
		a.errorf(f.val, "loop has no way to end; add `until` (a signal in the output) or `until_bash` (a check that exits 0)")
	}
	if g, ok := fs["max_iterations"]; !ok {
		a.errorf(f.val, "loop has no `max_iterations`; add `max_iterations: <1..%d>`", maxLoopIterations)
	} else if n, ok := a.integer(g); ok && (n < 1 || n > maxLoopIterations) {
		a.errorf(g.val, "`max_iterations` must be between 1 and %d, found %d", maxLoopIterations, n)
	} else {
		l.MaxIterations = n
	}
	if g, ok := fs["fresh_context"]; ok {
		l.FreshContext = a.boolean(g)
	}
	if g, ok := fs["interactive"]; ok {
		l.Interactive = a.boolean(g)
	}
	if g, ok := fs["gate_message"]; ok {
		l.GateMessage = a.promptText(g)
		m.texts = append(m.texts, text{"`loop.gate_message`", g.val})
	}
	return l
}

// agentFields decodes what only AI nodes (command, prompt, loop) take, with the workflow-level
// provider, model and effort as defaults.
func (a *archonDecoder) agentFields(fs map[string]field, node *Node) {
	ai := node.Kind == KindPrompt || node.Kind == KindLoop
	keys := []string{"provider", "model", "effort", "context", "idle_timeout", "allowed_tools", "denied_tools", "hooks"}
	for _, key := range keys {
		if f, ok := fs[key]; ok && !ai && node.Kind != "" {
			a.errorf(f.key, "`%s` applies only to command, prompt and loop nodes (Archon ignores it on this one); remove it", key)
		}
	}
	if !ai {
		return
	}
	a.model(fs, node)
	if f, ok := fs["effort"]; ok {
		node.Effort, _ = a.oneOf(f, archonEfforts)
	}
	if f, ok := fs["idle_timeout"]; ok {
		node.IdleTimeout, _ = a.ms(f)
	}
	a.context(fs, node)
	a.tools(fs, node)
	if f, ok := fs["hooks"]; ok {
		node.Hooks = a.hooks(f, node)
	}
	if _, ok := fs["retry"]; !ok && node.Kind == KindPrompt {
		node.Retry = Retry{MaxAttempts: archonAIAttempts, Delay: archonAIDelay, On: RetryTransient}
	}
}

// model decides a node's provider, model and effort: its own, else the workflow's, with tiers
// and aliases resolved (archon_model.go).
func (a *archonDecoder) model(fs map[string]field, node *Node) {
	node.Provider, node.Effort = a.provider, a.effort
	ref, at := a.modelRef, a.modelAt
	if f, ok := fs["provider"]; ok {
		node.Provider = a.providerOf(f)
	}
	if f, ok := fs["model"]; ok {
		ref, _ = a.nonEmpty(f)
		at = f
	}
	defer func() {
		if node.Provider == "" {
			node.Provider = archonDefaultProvider // Archon's default assistant, whatever the bot's is
		}
	}()
	if ref == "" {
		return
	}
	preset, ok := a.resolveModel(node.Provider, ref)
	switch {
	case !ok:
		a.errorf(at.val, "model alias `%s` is not defined in .archon/config.yaml `aliases`; define it or name a model", ref)
	case preset.Provider != "" && !contains(providers, preset.Provider):
		a.refuse(at.val, "provider")
	default:
		node.Model = preset.Model
		if preset.Provider != "" {
			node.Provider = preset.Provider
		}
		if node.Effort == "" {
			node.Effort = preset.Effort
		}
	}
}

// context decodes a node's session: fresh, shared, or by its layer when not given.
func (a *archonDecoder) context(fs map[string]field, node *Node) {
	f, ok := fs["context"]
	switch {
	case ok && f.val.Kind == yaml.MappingNode:
		a.refuse(f.key, "context.resume")
	case ok && node.Kind == KindLoop:
		a.errorf(f.key, "a loop sets its session with `loop.fresh_context`; remove `context`")
	case ok:
		if s, ok := a.oneOf(f, contextModes); ok {
			node.Context = ContextMode(s)
		}
	case node.Kind == KindPrompt && a.solo[node.ID]:
		node.Context = ContextShared
	}
}

// tools decodes allowed_tools and denied_tools, which narrow what Claude may use.
func (a *archonDecoder) tools(fs map[string]field, node *Node) {
	for _, key := range []string{"allowed_tools", "denied_tools"} {
		f, ok := fs[key]
		if !ok {
			continue
		}
		if node.Provider == "codex" {
			a.refuse(f.key, key)
			continue
		}
		list, ok := a.strList(f)
		if !ok {
			continue
		}
		if key == "allowed_tools" {
			node.Tools, node.ToolsSet = list, true
		} else {
			node.DeniedTools = list
		}
	}
}

// execFields decodes timeout and retry.
func (a *archonDecoder) execFields(fs map[string]field, node *Node) {
	exec := node.Kind == KindBash || node.Kind == KindScript
	if exec && fs["loop_group"].key == nil {
		node.Timeout = archonSubprocessTimeout
	}
	if f, ok := fs["timeout"]; ok {
		if exec {
			node.Timeout, _ = a.ms(f)
		} else if node.Kind != "" {
			a.refuse(f.key, "timeout")
		}
	}
	if f, ok := fs["retry"]; ok {
		if node.Kind == KindWorkflow {
			a.errorf(f.key, "a workflow node takes no `retry` (Archon refuses it: a retry would leave the first child run behind); resume the run instead")
			return
		}
		if node.Kind == KindLoop {
			a.errorf(f.key, "a loop manages its own iterations and takes no `retry` (Archon refuses it too); remove it")
			return
		}
		a.retry(f, node)
	}
	if node.Retry.On == "" {
		node.Retry.On = node.Kind.DefaultRetryOn()
	}
}

// retry translates Archon's retry block: max_attempts counts the retries (Archon's "3 retries =
// 4 total attempts"), delay_ms the wait between them.
func (a *archonDecoder) retry(f field, node *Node) {
	fs := a.mapping(f.val, "`retry`", []string{"max_attempts", "delay_ms", "on_error"})
	r := Retry{MaxAttempts: 1, Delay: archonAIDelay}
	if g, ok := fs["max_attempts"]; ok {
		if n, ok := a.integer(g); ok && (n < 1 || n > 5) {
			a.errorf(g.val, "`retry.max_attempts` must be between 1 and 5, found %d", n)
		} else if ok {
			r.MaxAttempts = n + 1
		}
	} else if fs != nil {
		a.errorf(f.val, "retry has no `max_attempts`; add how many times to retry (1 to 5)")
	}
	if g, ok := fs["delay_ms"]; ok {
		if d, ok := a.ms(g); ok {
			r.Delay = d
		}
	}
	if g, ok := fs["on_error"]; ok {
		if s, ok := a.oneOf(g, retryOns); ok {
			r.On = RetryOn(s)
		}
	}
	node.Retry = r
}

// loopGroup translates a loop_group whose body is one bash node and which ends on until_bash into
// one bash node that runs the body, then the check, up to max_iterations times: the same thing,
// in the same order, with the last body output as the node's output. Anything else is refused.
func (a *archonDecoder) loopGroup(f field, id string, m *nodeMeta) string {
	fs := a.mapping(f.val, "`loop_group`", []string{"max_iterations", "until_bash", "until", "until_field", "nodes", "fresh_context", "interactive", "gate_message", "signal_completes"})
	body, check, maxIt := "", "", 0
	if g, ok := fs["nodes"]; ok && g.val.Kind == yaml.SequenceNode && len(g.val.Content) == 1 {
		inner := a.mapping(g.val.Content[0], "a loop_group node", archonNodeFields)
		if b, ok := inner["bash"]; ok && len(inner) <= 3 && (inner["depends_on"].key == nil || len(inner["depends_on"].val.Content) == 0) {
			body = a.bashText(b)
			m.texts = append(m.texts, text{"`loop_group` body", b.val})
		}
	}
	if g, ok := fs["until_bash"]; ok {
		check = a.bashText(g)
		m.texts = append(m.texts, text{"`loop_group.until_bash`", g.val})
	}
	if g, ok := fs["max_iterations"]; ok {
		if n, ok := a.integer(g); ok && n >= 1 && n <= maxLoopIterations {
			maxIt = n
		}
	}
	extra := len(fs) > 3
	if body == "" || check == "" || maxIt == 0 || extra {
		a.refuse(f.key, "loop_group")
		return ""
	}
	secs := int(archonSubprocessTimeout.Seconds()) // Archon bounds each body run and check by it
	return fmt.Sprintf(`# loop_group %s, translated by Threadflow (docs/archon.md)
tf_body=%s
tf_check=%s
tf_out="$(mktemp)"
trap 'rm -f "$tf_out"' EXIT
for LOOP_ITERATION in $(seq 1 %d); do
  export LOOP_ITERATION
  timeout %d bash -c "$tf_body" >"$tf_out" || exit $?
  if timeout %d bash -c "$tf_check" >/dev/null; then cat "$tf_out"; exit 0; fi
done
echo "loop_group %s reached max_iterations (%d) without until_bash succeeding" >&2
exit 1
`, id, shellQuote(body), shellQuote(check), maxIt, secs, secs, id, maxIt)
}

// shellQuote quotes s as one word for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
