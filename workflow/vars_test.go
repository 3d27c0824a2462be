package workflow

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"threadflow/testkit"
)

func TestExpand(t *testing.T) {
	t.Parallel()
	v := Vars{Arguments: "main.go", RunID: "r9", ArtifactsDir: "/tmp/a", LoopUserInput: "shorter", LoopIteration: 3, Attempt: 2,
		Outputs: map[string]string{"review": "  looks fine\n", "my-node": "m"}}
	tests := []struct{ in, want string }{
		{"Review $ARGUMENTS now", "Review main.go now"},
		{"${ARGUMENTS}x", "main.gox"},
		{"$RUN_ID $ARTIFACTS_DIR $LOOP_USER_INPUT $LOOP_ITERATION $ATTEMPT", "r9 /tmp/a shorter 3 2"},
		{"said: $review.output.", "said: looks fine."},
		{"said: ${review.output}!", "said: looks fine!"},
		{"$my-node.output", "m"},
		{"$gone.output|", "|"}, // a node that did not run: empty
		{"$HOME and $ARGUMENTS_X and $ stay", "$HOME and $ARGUMENTS_X and $ stay"},
		{"$review.outputs stays", "$review.outputs stays"},
		{"price: $5", "price: $5"},
		{"${unclosed", "${unclosed"},
	}
	for _, tt := range tests {
		if got := Expand(tt.in, v); got != tt.want {
			t.Errorf("Expand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Expanded values are not expanded again: an output that looks like a variable stays literal.
func TestExpandDoesNotRecurse(t *testing.T) {
	t.Parallel()
	v := Vars{Arguments: "$RUN_ID", RunID: "secret", Outputs: map[string]string{"a": "$ARGUMENTS"}}
	if got := Expand("$ARGUMENTS / $a.output", v); got != "$RUN_ID / $ARGUMENTS" {
		t.Errorf("Expand = %q", got)
	}
}

func TestShellScript(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`echo "$greet.output"`, `echo "${TF_OUTPUT_GREET}"`},
		{`echo "${greet.output}"`, `echo "${TF_OUTPUT_GREET}"`},
		{`echo "$my-node.output."`, `echo "${TF_OUTPUT_MY_NODE}."`},
		{`echo "$ARGUMENTS" "$RUN_ID"`, `echo "$ARGUMENTS" "$RUN_ID"`},
		{`echo \$greet.output $$greet.output`, `echo \$greet.output $$greet.output`},
	}
	for _, tt := range tests {
		if got := ShellScript(tt.in); got != tt.want {
			t.Errorf("ShellScript(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestShellEnv(t *testing.T) {
	t.Parallel()
	v := Vars{Arguments: "a b", RunID: "r1", ArtifactsDir: "/art", Outputs: map[string]string{"z": "last\n", "a-b": "x\x00y"}}
	want := []string{"ARGUMENTS=a b", "RUN_ID=r1", "ARTIFACTS_DIR=/art", "LOOP_USER_INPUT=", "LOOP_ITERATION=", "ATTEMPT=",
		"TF_OUTPUT_A_B=xy", "TF_OUTPUT_Z=last\n"}
	if got := ShellEnv(v); !slices.Equal(got, want) {
		t.Errorf("ShellEnv =\n%q\nwant\n%q", got, want)
	}
}

func TestOutputEnvName(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]string{"build": "TF_OUTPUT_BUILD", "run-tests_2": "TF_OUTPUT_RUN_TESTS_2", "é.x": "TF_OUTPUT____X"} {
		if got := OutputEnvName(id); got != want {
			t.Errorf("OutputEnvName(%q) = %q, want %q", id, got, want)
		}
	}
}

// Hostile outputs and arguments must reach the script as data. The test runs the rewritten script
// in a real shell and checks that nothing was executed and the values come out byte for byte.
func TestShellValuesNeverBecomeCode(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	if err != nil {
		testkit.Missing(t, "no sh on this machine")
	}
	hostile := []string{
		"$(touch pwned)",
		"`touch pwned`",
		"'; touch pwned; echo '",
		"\"; touch pwned; echo \"",
		"$ARGUMENTS ${IFS} \\ \n; touch pwned",
	}
	for _, h := range hostile {
		t.Run(h, func(t *testing.T) {
			dir := t.TempDir()
			v := Vars{Arguments: h, Outputs: map[string]string{"greet": h}}
			script := ShellScript(`printf '%s|%s' "$greet.output" "$ARGUMENTS"`)
			if strings.Contains(script, h) {
				t.Fatalf("the value entered the script: %q", script)
			}
			cmd := exec.Command(sh, "-c", script)
			cmd.Dir = dir
			cmd.Env = ShellEnv(v)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("sh: %v", err)
			}
			if string(out) != h+"|"+h {
				t.Errorf("printed %q, want %q", out, h+"|"+h)
			}
			if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
				t.Error("the hostile value was executed")
			}
		})
	}
}
