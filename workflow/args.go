package workflow

import (
	"fmt"
	"strings"
)

// CheckArgs checks that a run supplies the workflow's required inputs. All inputs travel together
// as one $ARGUMENTS string, so a workflow with a required input needs non-blank arguments. The
// error (matching ErrMissingInput) lists the inputs so chat can show how to call the workflow.
// Typed inputs (Typed) are checked by RunInputs instead.
func (w *Workflow) CheckArgs(args string) error {
	if strings.TrimSpace(args) != "" || w.Typed() { // typed inputs are RunInputs' to check
		return nil
	}
	if strings.TrimSpace(args) != "" {
		return nil
	}
	var required, all []string
	for _, in := range w.Inputs {
		desc := in.Name
		if in.Description != "" {
			desc += " (" + in.Description + ")"
		}
		if in.Required {
			required = append(required, in.Name)
		}
		all = append(all, desc)
	}
	if len(required) == 0 {
		return nil
	}
	return fmt.Errorf("%w: workflow %s needs %s; inputs: %s; usage: /workflow run %s <%s>",
		ErrMissingInput, w.Name, strings.Join(required, ", "), strings.Join(all, "; "), w.Name, strings.Join(required, "> <"))
}
