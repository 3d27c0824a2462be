package workflow

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrInvalid matches every *Error: the workflow file is not valid.
	ErrInvalid = errors.New("invalid workflow")
	// ErrMissingInput: a run was started without the arguments its workflow requires.
	ErrMissingInput = errors.New("missing workflow input")
	// ErrBadInput: a run's typed inputs were refused (InputError says which and why).
	ErrBadInput = errors.New("bad workflow input")
)

// Error is one problem in a workflow file. Msg says what is wrong and how to fix it.
// Line and Col are 1-based; they are 0 only for problems with no position (an unreadable directory).
type Error struct {
	File      string
	Line, Col int
	Msg       string
	// Refused names the Archon fields a file was refused for (docs/archon.md); nil otherwise.
	Refused []string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(":")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "%d:%d:", e.Line, e.Col)
	}
	if b.Len() > 0 {
		b.WriteString(" ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap lets errors.Is(err, ErrInvalid) recognise any validation problem.
func (e *Error) Unwrap() error { return ErrInvalid }

// Errors is every problem found in one or more files, one per line when printed.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap exposes each problem to errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// sortByPosition orders problems as a reader meets them in the file.
func (es Errors) sortByPosition() {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].File != es[j].File {
			return es[i].File < es[j].File
		}
		if es[i].Line != es[j].Line {
			return es[i].Line < es[j].Line
		}
		return es[i].Col < es[j].Col
	})
}
