package workflow

// The fields of Archon's DAG mode that Threadflow cannot honour, each with the reason a refusal
// gives. docs/archon.md lists every one of these reasons (TestArchonRefusalsAreDocumented), so a
// refusal always points at a documented reason.
var archonRefusals = map[string]string{
	// Workflow level.
	"steps":                 "Archon's legacy steps mode is not supported; rewrite the workflow with `nodes:` (DAG mode)",
	"loop":                  "a workflow-level loop is Archon's legacy loop mode; write it as a node with `loop:`",
	"prompt":                "a workflow-level prompt belongs to Archon's legacy loop mode; write it as a node",
	"requires":              "Threadflow has no per-user GitHub identities to require",
	"webSearchMode":         "Codex's web search setting has no Threadflow equivalent",
	"additionalDirectories": "Threadflow gives a run one working directory; extra directories would be reachable without being declared in its workspace",
	"container":             "Threadflow does not run workflows in containers",
	"evidence_policy":       "Threadflow has no evidence policy",
	"inputs":                "Archon's typed inputs ($INPUTS) are not translated; pass values in $ARGUMENTS",
	"with":                  "Archon's `with:` bindings ($INPUTS) are not translated; pass values in $ARGUMENTS",
	// Providers and what only Archon's SDK integrations offer.
	"provider":         "Threadflow runs only the claude and codex CLIs",
	"skills":           "Claude skills are set up per installation, not per node, in Threadflow",
	"agents":           "inline Claude sub-agents are not supported",
	"mcp":              "MCP server settings are not passed to the agent CLIs",
	"pi":               "the pi provider is not supported",
	"thinking":         "the thinking setting has no CLI flag in the versions Threadflow supports; use `effort`",
	"maxBudgetUsd":     "a per-node cost cap is not enforced",
	"systemPrompt":     "replacing the agent's system prompt is not supported",
	"fallbackModel":    "a fallback model is not supported",
	"settingSources":   "which setting sources Claude reads is decided by the installation",
	"betas":            "SDK beta flags are not passed to the CLIs",
	"sandbox":          "Claude's SDK sandbox settings are not passed to the CLI; use `permissions` levels",
	"persist_session":  "sessions are kept per run; carrying one across runs is not supported",
	"isolation":        "a sub-run's isolation is not supported",
	"deps":             "declared script dependencies are not installed",
	"on_reject":        "an approval's rework prompt (on_reject) is not supported; wire a rework node with depends_on",
	"decisions":        "an approval's named decisions are not supported; approve or reject",
	"until_field":      "a loop ending on a structured field is not supported; use `until` or `until_bash`",
	"signal_completes": "signal_completes is not supported; use `until` or `until_bash`",
	"loop_group":       "a loop_group is translated only when its body is one bash node and it ends on until_bash",
	"context.resume":   "forking a named node's session (context: {resume}) is not supported; use `context: shared`",
	"timeout":          "Archon applies `timeout` to bash and script nodes only; an AI node is bounded by `idle_timeout`",
	"allowed_tools":    "per-tool lists apply to Claude only; the codex CLI has no such control",
	"denied_tools":     "per-tool lists apply to Claude only; the codex CLI has no such control",
	"hooks":            "hooks apply to Claude only, as static responses that add context or deny a tool; a response that allows a tool, stops the agent or changes a tool's input would act past the node's permissions",
	"command":          "the command file was not found in .archon/commands/ or a folder one level below it",
	"include":          "the included workflow was not found, or includes nest deeper than Archon allows",
	"variable":         "this Archon variable has no Threadflow value",
}

// archonWorkflowRefused are the workflow-level keys refused wherever they appear.
var archonWorkflowRefused = []string{"steps", "loop", "prompt", "requires", "webSearchMode", "additionalDirectories",
	"container", "evidence_policy", "inputs", "skills", "thinking", "fallbackModel", "betas", "sandbox"}

// archonWorkflowFields are the workflow-level keys of Archon's dialect.
var archonWorkflowFields = []string{"name", "description", "provider", "model", "effort", "modelReasoningEffort",
	"interactive", "worktree", "mutates_checkout", "tags", "nodes", "returns",
	"steps", "loop", "prompt", "requires", "webSearchMode", "additionalDirectories", "container", "evidence_policy",
	"inputs", "skills", "thinking", "fallbackModel", "betas", "sandbox", archonKey}

// archonNodeFields are the node keys of Archon's dialect.
var archonNodeFields = []string{"id", "description", "depends_on", "when", "trigger_rule", "model", "provider",
	"context", "output_format", "allowed_tools", "denied_tools", "idle_timeout", "retry", "hooks", "mcp", "skills",
	"agents", "pi", "effort", "thinking", "maxBudgetUsd", "systemPrompt", "fallbackModel", "settingSources", "betas",
	"sandbox", "always_run", "persist_session", "output_type",
	"command", "prompt", "bash", "loop", "loop_group", "approval", "cancel", "include", "workflow", "input",
	"isolation", "fan_out", "with", "script", "runtime", "deps", "timeout"}

// archonKinds are the keys that say what an Archon node does; a node has exactly one.
var archonKinds = []string{"command", "prompt", "bash", "loop", "loop_group", "approval", "cancel", "include", "workflow", "script"}
