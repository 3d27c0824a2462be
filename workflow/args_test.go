package workflow

import (
	"errors"
	"testing"
)

func TestCheckArgs(t *testing.T) {
	t.Parallel()
	w := &Workflow{Name: "review", Inputs: []Input{
		{Name: "target", Description: "what to review", Required: true},
		{Name: "focus"},
	}}
	err := w.CheckArgs("  \n")
	if !errors.Is(err, ErrMissingInput) {
		t.Fatalf("err = %v, want ErrMissingInput", err)
	}
	want := "missing workflow input: workflow review needs target; inputs: target (what to review); focus; usage: /workflow run review <target>"
	if err.Error() != want {
		t.Errorf("err = %q\nwant  %q", err, want)
	}
	if err := w.CheckArgs("main.go"); err != nil {
		t.Errorf("CheckArgs(main.go) = %v", err)
	}
	optional := &Workflow{Name: "hello", Inputs: []Input{{Name: "who"}}}
	if err := optional.CheckArgs(""); err != nil {
		t.Errorf("optional inputs: %v", err)
	}
}
