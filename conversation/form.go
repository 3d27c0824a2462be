package conversation

import "context"

// A Form asks a person for a workflow's typed inputs instead of failing a run command that lacks
// them: a Slack modal, a Discord modal, the dashboard's Run form. Its submission is checked by the
// same rules as a typed command (the dispatcher's), and starts the run in the conversation where
// the command was typed.
type Form struct {
	Workflow string
	Title    string // "Run release"
	Fields   []Field
	Force    bool // the command said --force
}

// FieldKind is how a field is entered.
type FieldKind string

// Field kinds: free text (string and number inputs), one of Choices (a menu), or yes/no.
const (
	FieldText    FieldKind = "text"
	FieldChoice  FieldKind = "choice"
	FieldBoolean FieldKind = "boolean"
)

// Field is one input of a Form.
type Field struct {
	Name     string // the input's name: the value's key in a Submission
	Label    string
	Hint     string // what it accepts, and the input's description
	Kind     FieldKind
	Choices  []string // FieldChoice; FieldBoolean's are "true" and "false"
	Default  string
	Required bool
	Value    string // a value given already (with the command, or a refused submission)
}

// Options are the values a choice or boolean field offers.
func (f Field) Options() []string {
	if f.Kind == FieldBoolean {
		return []string{"true", "false"}
	}
	return f.Choices
}

// Submission is a Form sent back: the values by field name ("" for a field left empty).
type Submission struct {
	Workflow string
	Values   map[string]string
	Force    bool
}

// Forms is what an adapter that shows forms asks of the bot.
type Forms interface {
	// FormFor returns the form to show instead of handling m: m is a run command of a workflow
	// with typed inputs that lacks required ones, from someone who may run it there. nil: handle m
	// as usual.
	FormFor(ctx context.Context, m Message) *Form
	// Form is the form of workflow for the sender of m, or an error saying why there is none (no
	// such workflow, no typed inputs, not allowed).
	Form(ctx context.Context, m Message, workflow string) (*Form, error)
	// Workflows are the workflows with typed inputs the sender of m may start with a form here.
	Workflows(ctx context.Context, m Message) []string
	// Submit checks s as a typed run command would be checked and, when every value is accepted,
	// starts the run in m's conversation and returns its id. Refused values come back by field name
	// and nothing is started; a refusal that is about no field (access, a busy concurrency group)
	// is said in m's conversation and comes back under the key "".
	Submit(ctx context.Context, m Message, s Submission) (runID string, refused map[string]string)
}
