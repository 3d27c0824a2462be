package main

import "testing"

func TestParseInvocation(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		flavorEnv  string
		wantFlavor string
		wantResume string
		wantErr    bool
	}{
		{"claude fresh", []string{"-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits"}, "", "claude", "", false},
		{"claude resume", []string{"-p", "--output-format=stream-json", "--verbose", "--permission-mode", "dontAsk", "--model", "m", "--resume", "s1"}, "", "claude", "s1", false},
		{"claude without a permission mode", []string{"-p", "--output-format", "stream-json", "--verbose"}, "", "", "", true},
		{"claude prompt in argv", []string{"-p", "do it", "--output-format", "stream-json", "--verbose"}, "", "", "", true},
		{"claude without stream-json", []string{"-p", "--verbose"}, "", "", "", true},
		{"claude without verbose", []string{"-p", "--output-format", "stream-json"}, "", "", "", true},
		{"codex fresh", []string{"--ask-for-approval", "never", "exec", "--json", "--skip-git-repo-check", "--sandbox", "workspace-write", "-"}, "", "codex", "", false},
		{"codex resume", []string{"exec", "--json", "--sandbox", "read-only", "--model", "resume", "resume", "th-1", "-"}, "", "codex", "th-1", false},
		{"codex without a sandbox", []string{"exec", "--json", "-"}, "", "", "", true},
		{"codex with an unknown global option", []string{"--yolo", "exec", "--json", "--sandbox", "read-only", "-"}, "", "", "", true},
		{"codex prompt in argv", []string{"exec", "--json", "do it"}, "", "", "", true},
		{"codex without json", []string{"exec", "-"}, "", "", "", true},
		{"codex resume without id", []string{"exec", "--json", "resume"}, "", "", "", true},
		{"flavor from env", []string{"exec", "--json", "-"}, "claude", "", "", true},
		{"unknown flavor", nil, "gemini", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv, err := parseInvocation(tt.args, tt.flavorEnv)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("parseInvocation(%q) = %+v, want an error", tt.args, inv)
				}
				return
			}
			if err != nil || inv.flavor != tt.wantFlavor || inv.resume != tt.wantResume {
				t.Errorf("parseInvocation(%q) = %+v, %v; want flavor %s resume %q", tt.args, inv, err, tt.wantFlavor, tt.wantResume)
			}
		})
	}
}
