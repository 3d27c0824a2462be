package workflow

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// InputType is what values an input accepts.
type InputType string

// The input types. String is the default.
const (
	TypeString  InputType = "string"
	TypeChoice  InputType = "choice"
	TypeBoolean InputType = "boolean"
	TypeNumber  InputType = "number"
)

var inputTypes = []string{string(TypeString), string(TypeChoice), string(TypeBoolean), string(TypeNumber)}

// MaxInputValue bounds one input's value in bytes; the whole of a run's arguments is bounded again
// by MAX_ARGS_BYTES where the request enters.
const MaxInputValue = 4096

// Input is one input a workflow takes. A workflow whose inputs declare a type, choices, a default
// or a pattern has typed inputs (Workflow.Typed): each run carries them by name, validated before
// anything is written, as INPUT_<NAME> in scripts and $inputs.<name> in texts and conditions.
// Without them, inputs only document what $ARGUMENTS should hold.
type Input struct {
	Name, Description string
	Required          bool
	Type              InputType // empty when not declared: string, or choice when Choices are given
	Choices           []string
	Default           string
	HasDefault        bool
	Pattern           *regexp.Regexp // matches the whole value (anchored at parse)
	PatternText       string         // as written, for messages and forms
}

// Kind is the input's type, string when none was declared.
func (in Input) Kind() InputType {
	switch {
	case in.Type != "":
		return in.Type
	case len(in.Choices) > 0:
		return TypeChoice
	}
	return TypeString
}

// Accepts says what the input accepts, for messages: "one of a, b", "true or false", ...
func (in Input) Accepts() string {
	switch in.Kind() {
	case TypeChoice:
		return "one of: " + strings.Join(in.Choices, ", ")
	case TypeBoolean:
		return "true or false"
	case TypeNumber:
		return "a number"
	}
	if in.Pattern != nil {
		return "text matching " + in.PatternText
	}
	return fmt.Sprintf("text of at most %d bytes", MaxInputValue)
}

// Typed reports whether the workflow's inputs are typed: values by name rather than one
// $ARGUMENTS string.
func (w *Workflow) Typed() bool {
	for _, in := range w.Inputs {
		if in.Type != "" || len(in.Choices) > 0 || in.HasDefault || in.Pattern != nil {
			return true
		}
	}
	return false
}

// Input returns the input named name.
func (w *Workflow) Input(name string) (Input, bool) {
	for _, in := range w.Inputs {
		if in.Name == name {
			return in, true
		}
	}
	return Input{}, false
}

// InputProblem is one input refused, by name ("" for the request as a whole).
type InputProblem struct {
	Input, Msg string
}

// InputError lists every input a request got wrong. It matches ErrBadInput; Missing is true when
// the only problems are required inputs left out (a form may then be offered instead).
type InputError struct {
	Workflow string
	Problems []InputProblem
	Missing  bool
}

func (e *InputError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Msg
	}
	return fmt.Sprintf("workflow %s was not started: %s", e.Workflow, strings.Join(msgs, "; "))
}

func (e *InputError) Unwrap() error { return ErrBadInput }

// Of returns the message about input name, "" when it has none.
func (e *InputError) Of(name string) string {
	for _, p := range e.Problems {
		if p.Input == name {
			return p.Msg
		}
	}
	return ""
}

// RunInputs reads the inputs of a run of w from its argument words, as chat, the terminal and
// triggers pass them: `name=value` words, or, when w has exactly one input, the whole text as its
// value. Every value is then checked as CheckInputs does. Every way of starting a run calls this
// or CheckInputs, so one set of rules decides what a run accepts. A workflow without typed inputs
// has none (nil, nil).
func (w *Workflow) RunInputs(words []string) (map[string]string, error) {
	if !w.Typed() {
		return nil, nil
	}
	given, problems := w.pairs(words)
	if len(problems) > 0 {
		return nil, &InputError{Workflow: w.Name, Problems: problems}
	}
	return w.CheckInputs(given)
}

// pairs reads name=value words. A workflow with one input takes any other text as that input's
// value (positional), so `/workflow run release v1.2` and `version=v1.2` are the same run.
func (w *Workflow) pairs(words []string) (map[string]string, []InputProblem) {
	given := map[string]string{}
	if len(words) == 0 {
		return given, nil
	}
	var problems []InputProblem
	allPairs := true
	for _, word := range words {
		name, _, ok := strings.Cut(word, "=")
		if _, known := w.Input(name); !ok || !known {
			allPairs = false
		}
	}
	if !allPairs && len(w.Inputs) == 1 {
		given[w.Inputs[0].Name] = strings.Join(words, " ")
		return given, nil
	}
	for _, word := range words {
		name, value, ok := strings.Cut(word, "=")
		if !ok {
			problems = append(problems, InputProblem{Msg: fmt.Sprintf("%q is not name=value; %s takes %s", clip(word), w.Name, w.inputNames())})
			continue
		}
		if _, known := w.Input(name); !known {
			problems = append(problems, InputProblem{Input: name, Msg: fmt.Sprintf("there is no input %q; %s takes %s", clip(name), w.Name, w.inputNames())})
			continue
		}
		if _, dup := given[name]; dup {
			problems = append(problems, InputProblem{Input: name, Msg: fmt.Sprintf("input %s is given twice; give it once", name)})
			continue
		}
		given[name] = value
	}
	return given, problems
}

func (w *Workflow) inputNames() string {
	names := make([]string, len(w.Inputs))
	for i, in := range w.Inputs {
		names[i] = in.Name + "=…"
	}
	return strings.Join(names, " ")
}

// CheckInputs validates values given by name (a form's fields, or RunInputs' words) and returns
// the run's inputs: every declared input with a value or a default, values normalised (booleans as
// true/false). Unknown names, values the type, choices or pattern refuse, and required inputs left
// out are each one InputProblem of an *InputError.
func (w *Workflow) CheckInputs(given map[string]string) (map[string]string, error) {
	var problems []InputProblem
	for _, name := range slices.Sorted(maps.Keys(given)) {
		if _, known := w.Input(name); !known {
			problems = append(problems, InputProblem{Input: name, Msg: fmt.Sprintf("there is no input %q; %s takes %s", clip(name), w.Name, w.inputNames())})
		}
	}
	out := make(map[string]string, len(w.Inputs))
	missing := 0
	for _, in := range w.Inputs {
		v, ok := given[in.Name]
		if !ok || v == "" {
			switch {
			case in.HasDefault:
				out[in.Name] = in.Default
			case in.Required:
				missing++
				problems = append(problems, InputProblem{Input: in.Name, Msg: fmt.Sprintf("input %s is required: give %s=<%s>", in.Name, in.Name, in.Accepts())})
			}
			continue
		}
		norm, err := in.Check(v)
		if err != nil {
			problems = append(problems, InputProblem{Input: in.Name, Msg: err.Error()})
			continue
		}
		out[in.Name] = norm
	}
	if len(problems) > 0 {
		return nil, &InputError{Workflow: w.Name, Problems: problems, Missing: missing > 0 && missing == len(problems)}
	}
	return out, nil
}

// Check validates one value of the input and returns it normalised.
func (in Input) Check(v string) (string, error) {
	bad := func() error {
		return fmt.Errorf("input %s does not accept %q: it takes %s", in.Name, clip(v), in.Accepts())
	}
	if len(v) > MaxInputValue || !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
		return "", fmt.Errorf("input %s takes text of at most %d bytes, without NUL bytes", in.Name, MaxInputValue)
	}
	switch in.Kind() {
	case TypeChoice:
		for _, c := range in.Choices {
			if v == c {
				return v, nil
			}
		}
		return "", bad()
	case TypeBoolean:
		switch strings.ToLower(v) {
		case "true", "yes", "on", "1":
			return "true", nil
		case "false", "no", "off", "0":
			return "false", nil
		}
		return "", bad()
	case TypeNumber:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f != f || f > 1e300 || f < -1e300 {
			return "", bad()
		}
		return v, nil
	}
	if in.Pattern != nil && !in.Pattern.MatchString(v) {
		return "", bad()
	}
	return v, nil
}

// InputEnvName is the environment variable carrying an input into scripts: INPUT_ and the name
// upper-cased, every byte outside [A-Za-z0-9] as '_'.
func InputEnvName(name string) string {
	return "INPUT_" + envPart(name)
}
