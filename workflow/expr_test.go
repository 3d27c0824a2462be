package workflow

import (
	"errors"
	"strings"
	"testing"
)

func TestExprEval(t *testing.T) {
	t.Parallel()
	v := Vars{
		Arguments:     "deploy prod",
		RunID:         "r1",
		Outputs:       map[string]string{"build": "ok\n", "test": "  FAIL  ", "empty": "\n", "my-node": "x"},
		LoopIteration: 2,
	}
	tests := []struct {
		src  string
		want bool
	}{
		{"$build.output == 'ok'", true}, // outputs are trimmed
		{"${build.output} == \"ok\"", true},
		{"$test.output == 'FAIL'", true},
		{"$build.output != 'ok'", false},
		{"$ARGUMENTS == 'deploy prod'", true},
		{"$RUN_ID == 'r1'", true},
		{"$LOOP_ITERATION == '2'", true},
		{"$my-node.output == 'x'", true},
		{"'ok' == $build.output", true},
		{"$build.output", true},    // bare operand: non-empty
		{"$empty.output", false},   // only whitespace counts as empty
		{"$missing.output", false}, // a node that did not run has no output
		{"''", false},
		{"'a'", true},
		{"!$empty.output", true},
		{"!$build.output == 'ok'", false}, // '!' applies to the whole comparison
		// && binds tighter than ||.
		{"'a' || '' && ''", true},
		{"('a' || '') && ''", false},
		{"'' && 'a' || 'a'", true},
		{"'' && ('a' || 'a')", false},
		{"!('' || '')", true},
		{"!!'a'", true},
		{"'it\\'s' == \"it's\"", true},
		{"'a\\nb' == \"a\nb\"", true},
		{"'\\\\' == \"\\\\\"", true},
		{"  $build.output\n==\t'ok'  ", true},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			e, err := ParseExpr(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			if got := e.Eval(v); got != tt.want {
				t.Errorf("Eval = %v, want %v", got, tt.want)
			}
			if e.String() != strings.TrimSpace(tt.src) {
				t.Errorf("String = %q", e.String())
			}
		})
	}
}

func TestLoopIterationIsEmptyOutsideLoops(t *testing.T) {
	t.Parallel()
	e, err := ParseExpr("$LOOP_ITERATION")
	if err != nil {
		t.Fatal(err)
	}
	if e.Eval(Vars{}) {
		t.Error("$LOOP_ITERATION is non-empty outside a loop")
	}
}

func TestNilExprHolds(t *testing.T) {
	t.Parallel()
	var e *Expr
	if !e.Eval(Vars{}) || e.String() != "" {
		t.Error("a node without `when` must run")
	}
}

func TestParseExprErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src, want string
	}{
		{"", "1:1: condition is empty; write one like `$build.output == 'ok'` or remove `when`"},
		{"   ", "1:1: condition is empty; write one like `$build.output == 'ok'` or remove `when`"},
		{"$build.output ==", "1:17: expected a variable or a quoted string after `==`, found end of condition"},
		{"$a.output == ok", "1:14: unexpected `ok`; quote literal text like 'ok' and start variables with $"},
		{"$a.output = 'x'", "1:11: unexpected `=`; the operators are ==, !=, && and ||"},
		{"'a' & 'b'", "1:5: unexpected `&`; the operators are ==, !=, && and ||"},
		{"'a' ~ 'b'", "1:5: unexpected `~`; quote literal text like '~' and start variables with $"},
		{"'abc", "1:1: string starting here is not closed; end it with '"},
		{"'x' 'y'", "1:5: unexpected `'y'`; join conditions with && or ||"},
		{"('x' || 'y'", "1:12: expected ')' to close the '(' at column 1, found end of condition"},
		{"$HOME", "1:1: `$HOME` cannot be used in a condition; use $ARGUMENTS, $RUN_ID, $LOOP_ITERATION, $inputs.<name> or $<node>.output"},
		{"$build", "1:1: expected $ARGUMENTS, $RUN_ID, $LOOP_ITERATION, $inputs.<name>, $<node>.output or $<node>.output.<field> after `$`"},
		{"$build.outputs", "1:1: expected $ARGUMENTS, $RUN_ID, $LOOP_ITERATION, $inputs.<name>, $<node>.output or $<node>.output.<field> after `$`"},
		{"'a' &&\n  || 'b'", "2:3: expected a variable, a quoted string, '(' or '!', found `||`"},
		{"'é' == ok", "1:8: unexpected `ok`; quote literal text like 'ok' and start variables with $"},
		{strings.Repeat("!", 70) + "'a'", "1:66: condition nests deeper than 64 levels; simplify it"},
		{strings.Repeat("(", 70) + "'a'", "1:66: condition nests deeper than 64 levels; simplify it"},
		{strings.Repeat("'a' || ", 700) + "'a'", "1:1: condition is 4903 bytes; keep it under 4096"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			e, err := ParseExpr(tt.src)
			if e != nil {
				t.Error("ParseExpr returned an expression with an error")
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not *Error", err)
			}
			if err.Error() != tt.want {
				t.Errorf("error = %q\nwant    %q", err.Error(), tt.want)
			}
		})
	}
}
