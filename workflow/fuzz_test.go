package workflow

import (
	"bytes"
	"errors"
	"io/fs"
	"testing"
)

// FuzzParse checks that no input panics Parse and that every reported problem has a position.
func FuzzParse(f *testing.F) {
	f.Add([]byte(fullWorkflow))
	f.Add([]byte(head + "  - id: b\n    depends_on: [a, b]\n    when: |\n      $a.output == 'x' && (\n"))
	f.Add([]byte("name: x\nnodes:\n  - id: a\n    bash: &s echo\n  - id: b\n    bash: *s\n    when: \"\\u00e9 $a.output\"\n"))
	f.Add([]byte(head + "  - id: b\n    bash: echo\n    when: |"))
	f.Add([]byte("name: x\n---\n"))
	f.Add([]byte("{name: [1, {a: b}], nodes: [{id: a, loop: {max_iterations: -1}}]}"))
	f.Add([]byte(""))
	f.Add([]byte("name: x\rnodes: 0"))
	f.Add([]byte("name: x\u2028nodes:\r\n  - id: a\u0085    bash: [\n"))
	f.Add([]byte("name: x\nnodes:\n  - id: a\n    retry:\n      max_attempts: 2\n     delay: 1s\n\tbash: [a, 'b\n"))
	names, _ := fs.Glob(Bundled(), "*.yaml")
	for _, n := range names {
		src, _ := fs.ReadFile(Bundled(), n)
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		w, err := Parse("f.yaml", src)
		if err == nil {
			if w == nil || len(w.Nodes) == 0 {
				t.Fatal("valid workflow without nodes")
			}
			return
		}
		var es Errors
		if !errors.As(err, &es) || len(es) == 0 {
			t.Fatalf("error %v is not a non-empty Errors", err)
		}
		lines := bytes.Count(unifyLineBreaks(src), []byte("\n")) + 1
		for _, e := range es {
			if e.Line <= 0 || e.Col <= 0 {
				t.Fatalf("error without a position: %v", e)
			}
			if e.Line > lines {
				t.Fatalf("error past the file's %d lines: %v", lines, e)
			}
		}
	})
}

// FuzzParseExpr checks that no condition panics the parser and every error has a position.
func FuzzParseExpr(f *testing.F) {
	for _, s := range []string{
		"$build.output == 'ok'", "!($a.output != \"x\\\"y\") || $ARGUMENTS && $RUN_ID",
		"${a-b.output}", "((((", "'unterminated", "$", "${", "== !=", "\n\t$LOOP_ITERATION == '1'", "é",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := ParseExpr(src)
		if err == nil {
			e.Eval(Vars{Outputs: map[string]string{"a": "x"}})
			return
		}
		var pe *Error
		if !errors.As(err, &pe) || pe.Line <= 0 || pe.Col <= 0 {
			t.Fatalf("error without a position: %#v", err)
		}
	})
}
