package workflow

import "testing"

func TestDecide(t *testing.T) {
	t.Parallel()
	const (
		P = StatePending
		R = StateRunning
		C = StateCompleted
		F = StateFailed
		S = StateSkipped
	)
	tests := []struct {
		rule       TriggerRule
		a, b       NodeState // states of dependencies a and b; "" leaves it out of the map
		want       Verdict
		wantReason string
	}{
		{AllSuccess, C, C, Run, ""},
		{AllSuccess, C, R, Wait, ""},
		{AllSuccess, C, "", Wait, ""},
		{AllSuccess, R, F, Skip, "dependency b failed"}, // skip at once, without waiting for a
		{AllSuccess, S, C, Skip, "dependency a was skipped"},
		{AllSuccess, S, F, Skip, "dependency b failed"},
		{"", C, C, Run, ""}, // a Node built by hand defaults to all_success
		{"", F, C, Skip, "dependency a failed"},

		{OneSuccess, R, C, Run, ""}, // run as soon as one completed
		{OneSuccess, F, P, Wait, ""},
		{OneSuccess, F, S, Skip, "no dependency completed (one_success)"},
		{OneSuccess, "", "", Wait, ""},

		{NoneFailedMinOneSuccess, C, S, Run, ""},
		{NoneFailedMinOneSuccess, C, C, Run, ""},
		{NoneFailedMinOneSuccess, C, R, Wait, ""},
		{NoneFailedMinOneSuccess, S, S, Skip, "every dependency was skipped (none_failed_min_one_success)"},
		{NoneFailedMinOneSuccess, F, C, Skip, "dependency a failed"},
		{NoneFailedMinOneSuccess, P, F, Skip, "dependency b failed"},

		{AllDone, F, S, Run, ""},
		{AllDone, C, F, Run, ""},
		{AllDone, F, R, Wait, ""},
		{AllDone, "", C, Wait, ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.rule)+"/"+string(tt.a)+","+string(tt.b), func(t *testing.T) {
			n := &Node{ID: "n", DependsOn: []string{"a", "b"}, TriggerRule: tt.rule}
			deps := map[string]NodeState{"unrelated": StateFailed}
			if tt.a != "" {
				deps["a"] = tt.a
			}
			if tt.b != "" {
				deps["b"] = tt.b
			}
			v, reason := n.Decide(deps)
			if v != tt.want || reason != tt.wantReason {
				t.Errorf("Decide = %v %q, want %v %q", v, reason, tt.want, tt.wantReason)
			}
		})
	}
}

func TestDecideWithoutDependenciesRuns(t *testing.T) {
	t.Parallel()
	for _, rule := range []TriggerRule{AllSuccess, OneSuccess, NoneFailedMinOneSuccess, AllDone} {
		n := &Node{ID: "n", TriggerRule: rule}
		if v, _ := n.Decide(map[string]NodeState{"x": StateFailed}); v != Run {
			t.Errorf("%s: a node with no dependencies got %v", rule, v)
		}
	}
}

func TestVerdictString(t *testing.T) {
	t.Parallel()
	for v, want := range map[Verdict]string{Wait: "wait", Run: "run", Skip: "skip"} {
		if v.String() != want {
			t.Errorf("%d.String() = %q", v, v.String())
		}
	}
}
