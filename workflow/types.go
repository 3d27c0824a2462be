package workflow

import "time"

// Workflow is one parsed and validated workflow definition.
type Workflow struct {
	Name, Description string
	Inputs            []Input
	Access            *Access // nil: anyone allowed to use the bot may start it anywhere
	Triggers          []*Trigger
	Concurrency       *Concurrency // nil: runs do not wait for each other
	// MaxCostNanos is max_cost_usd: what one run's agent turns may spend, in nanodollars; 0: no limit.
	MaxCostNanos int64
	Nodes        []*Node
	Path         string // the file it was parsed from, as given to Parse
	Source       []byte // the exact bytes parsed; runs freeze this copy
	// Dialect is DialectArchon for a file of Archon's DAG mode (docs/archon.md), "" for ours.
	Dialect string
	// LiveCheckout: the run works in REPO_PATH itself, not in a workspace of its own (Archon's
	// `worktree: {enabled: false}`).
	LiveCheckout bool
	// ReadsCheckoutOnly: Archon's `mutates_checkout: false`, the run does not write to its checkout.
	ReadsCheckoutOnly bool

	reads map[string][]string // node id -> the upstream nodes its texts and `when` read (Graph.Inputs)
	// fieldReads: node id -> the {node, field} it reads, in Archon's files (Graph.MissingField)
	fieldReads map[string][][2]string
}

// Node returns the node with the given id, or nil.
func (w *Workflow) Node(id string) *Node {
	for _, n := range w.Nodes {
		if n.ID == id {
			return n
		}
	}
	return nil
}

// Trigger returns the trigger with the given name, or nil.
func (w *Workflow) Trigger(name string) *Trigger {
	for _, t := range w.Triggers {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Kind says what a node does.
type Kind string

// The node kinds; every node has exactly one.
const (
	KindBash     Kind = "bash"
	KindPrompt   Kind = "prompt"
	KindApproval Kind = "approval"
	KindLoop     Kind = "loop"
)

// DefaultRetryOn is which failures a node of this kind retries when its `retry` names no `on`.
// A shell command's exit status says nothing about whether trying again helps (a flaky test, a
// network blip), so shell and script nodes retry any failure; an agent CLI's errors are classified by the
// provider, and only the transient ones (rate limits, timeouts) are worth another paid turn.
func (k Kind) DefaultRetryOn() RetryOn {
	if k == KindBash || k == KindScript {
		return RetryAll
	}
	return RetryTransient
}

// TriggerRule decides from its dependencies' states whether a node runs. See Node.Decide.
type TriggerRule string

// The trigger rules. AllSuccess is the default.
const (
	AllSuccess              TriggerRule = "all_success"
	OneSuccess              TriggerRule = "one_success"
	NoneFailedMinOneSuccess TriggerRule = "none_failed_min_one_success"
	AllDone                 TriggerRule = "all_done"
)

// RetryOn says which failures a node retries.
type RetryOn string

// Retry policies. RetryTransient retries only failures the orchestrator classifies as transient
// (timeouts, rate limits); RetryAll retries any failure. Kind.DefaultRetryOn says which applies
// when `on` is not given.
const (
	RetryTransient RetryOn = "transient"
	RetryAll       RetryOn = "all"
)

// Retry is a node's retry budget. MaxAttempts counts the first attempt and defaults to 1 (no retry).
type Retry struct {
	MaxAttempts int
	Delay       time.Duration
	On          RetryOn
}

// ContextMode says whether a prompt starts a new AI session or continues the shared one.
type ContextMode string

// Context modes. ContextFresh is the default.
const (
	ContextFresh  ContextMode = "fresh"
	ContextShared ContextMode = "shared"
)

// Permissions is what an AI node's agent may do: read files, edit files in the run's working
// directory, or anything (full, which the operator must allow with AGENT_ALLOW_FULL=true). Empty
// means the bot's AGENT_PERMISSIONS. Package agent maps it to each CLI's flags.
type Permissions string

// Permission levels.
const (
	PermRead Permissions = "read"
	PermEdit Permissions = "edit"
	PermFull Permissions = "full"
)

// UntilBashTimeout bounds one until_bash check (Archon's subprocess default).
const UntilBashTimeout = 2 * time.Minute

// Loop repeats a prompt until its output contains Until or MaxIterations is reached.
type Loop struct {
	Prompt, Until string
	MaxIterations int
	// UntilBash, when set, is a bash script run after each iteration, for at most UntilBashTimeout:
	// exit status 0 ends the loop.
	UntilBash string
	// ArchonSignal: `Until` is found by Archon's rule, not anywhere in the output (Done).
	ArchonSignal bool
	FreshContext bool // each iteration starts a new AI session
	Interactive  bool // pause after each iteration for a person's reply ($LOOP_USER_INPUT)
	GateMessage  string
}

// Node is one step of a workflow. Exactly one of Bash, Prompt, Approval, Loop, Script, Workflow is set, as Kind says.
type Node struct {
	ID          string
	DependsOn   []string
	When        *Expr // nil when the node has no condition
	TriggerRule TriggerRule
	Timeout     time.Duration // 0: no node-level timeout
	Retry       Retry
	// ContinueOnError: the node failing does not fail the run (GitHub Actions' continue-on-error).
	// Its dependents still see it as failed and decide by their trigger rules.
	ContinueOnError bool
	Kind            Kind
	Bash            string
	Prompt          string
	Provider        string // prompt and loop nodes; empty means the default provider
	Model           string
	Context         ContextMode // prompt nodes
	Permissions     Permissions // prompt and loop nodes; empty means AGENT_PERMISSIONS
	// MaxCostNanos is max_cost_usd of a prompt or loop node: what its turns may spend over the run,
	// in nanodollars; 0: no limit.
	MaxCostNanos  int64
	Approval      *Approval
	Loop          *Loop
	Script        *Script       // script nodes (script.go)
	OutputFormat  *OutputFormat // prompt nodes: the JSON Schema of a structured answer (outputformat.go)
	Workflow      string        // workflow nodes: the name of the workflow its child run runs (child.go)
	ChildInput    string        // workflow nodes: the child's $ARGUMENTS (expanded), when HasChildInput
	HasChildInput bool          // `input` was given; without it the child gets the parent's arguments
	FanOut        *FanOut       // workflow nodes: one child run per item of a list (fanout.go); nil: one child
	Line, Col     int           // where the node is defined, for messages about it

	// The fields below come from Archon's dialect (docs/archon.md); Threadflow's own files leave
	// them zero.

	// Shell runs Bash with this shell ("bash"); "" is sh.
	Shell string
	// IdleTimeout bounds how long an AI turn may print nothing; 0 is AGENT_IDLE_TIMEOUT.
	IdleTimeout time.Duration
	// Effort is the reasoning effort asked of the model (low, medium, high, xhigh, max); "" is the CLI's.
	Effort string
	// Tools, when ToolsSet, are the only built-in tools the agent has (none when empty); DeniedTools
	// are taken away. Both only narrow what Permissions allows, never widen it.
	Tools       []string
	ToolsSet    bool
	DeniedTools []string
	// Hooks is Claude Code settings JSON holding static command hooks, or "".
	Hooks string
	// OutputType names the kind of output; the node's output is also kept as
	// $ARTIFACTS_DIR/nodes/<id>.md with <id>.meta.json beside it.
	OutputType string
	// AlwaysRun: an explicit resume runs the node again even if it completed before (Archon's
	// opt-out of resume caching).
	AlwaysRun bool
	// CancelReason is what a cancel node (KindCancel) cancels the run with, variables expanded.
	CancelReason string
}
