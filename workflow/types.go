package workflow

import "time"

// Workflow is one parsed and validated workflow definition.
type Workflow struct {
	Name, Description string
	Inputs            []Input
	Access            *Access // nil: anyone allowed to use the bot may start it anywhere
	Nodes             []*Node
	Path              string // the file it was parsed from, as given to Parse
	Source            []byte // the exact bytes parsed; runs freeze this copy

	reads map[string][]string // node id -> the upstream nodes its texts and `when` read (Graph.Inputs)
}

// Input documents what a workflow expects in $ARGUMENTS.
type Input struct {
	Name, Description string
	Required          bool
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
// network blip), so shell nodes retry any failure; an agent CLI's errors are classified by the
// provider, and only the transient ones (rate limits, timeouts) are worth another paid turn.
func (k Kind) DefaultRetryOn() RetryOn {
	if k == KindBash {
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

// Loop repeats a prompt until its output contains Until or MaxIterations is reached.
type Loop struct {
	Prompt, Until string
	MaxIterations int
	FreshContext  bool // each iteration starts a new AI session
	Interactive   bool // pause after each iteration for a person's reply ($LOOP_USER_INPUT)
	GateMessage   string
}

// Node is one step of a workflow. Exactly one of Bash, Prompt, Approval, Loop is set, as Kind says.
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
	Approval        *Approval
	Loop            *Loop
	Line, Col       int // where the node is defined, for messages about it
}
