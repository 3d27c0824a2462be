package commands

import (
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		in   string
		want Intent
	}{
		// Approvals, with the decorations people add.
		{"approve", IntentApprove},
		{"Approved", IntentApprove},
		{"  LGTM  ", IntentApprove},
		{"lgtm!", IntentApprove},
		{"lgtm, ship it", IntentApprove},
		{"no; stop", IntentReject},
		{"yes, no", IntentUnclear},
		{"lgtm, but fix the typo", IntentUnclear},
		{"yes", IntentApprove},
		{"Yes.", IntentApprove},
		{"y", IntentApprove},
		{"yep!!", IntentApprove},
		{"ok", IntentApprove},
		{"okay :)", IntentApprove},
		{"go", IntentApprove},
		{"Go ahead", IntentApprove},
		{"go  ahead!", IntentApprove},
		{"ship it 🚀", IntentApprove},
		{"proceed", IntentApprove},
		{"continue…", IntentApprove},
		{"yes, please", IntentApprove},
		{"👍", IntentApprove},
		{"👍🏽", IntentApprove},
		{"👍👍", IntentApprove},
		{"✅", IntentApprove},
		{"✔️", IntentApprove},
		{":+1:", IntentApprove},
		{":thumbsup:", IntentApprove},
		{"lgtm :tada:", IntentApprove},
		{"🎉 approve", IntentApprove},
		{"+1", IntentApprove},
		// Rejections.
		{"reject", IntentReject},
		{"Rejected.", IntentReject},
		{"no", IntentReject},
		{"NO!", IntentReject},
		{"n", IntentReject},
		{"nope", IntentReject},
		{"stop", IntentReject},
		{"cancel", IntentReject},
		{"abort!", IntentReject},
		{"deny", IntentReject},
		{"don’t", IntentReject},
		{"👎", IntentReject},
		{"❌", IntentReject},
		{":-1:", IntentReject},
		{":x:", IntentReject},
		{"no 👎", IntentReject},
		// Near misses: sentences, questions, conflicts, quotes and lookalikes stay unclear.
		{"", IntentUnclear},
		{"   ", IntentUnclear},
		{"no idea what this does", IntentUnclear},
		{"yes but change X", IntentUnclear},
		{"yes?", IntentUnclear},
		{"approve?", IntentUnclear},
		{"should I approve", IntentUnclear},
		{"not ok", IntentUnclear},
		{"ok no", IntentUnclear},
		{"yes 👎", IntentUnclear},
		{"👍👎", IntentUnclear},
		{"no 👍", IntentUnclear},
		{"yesterday", IntentUnclear},
		{"nobody", IntentUnclear},
		{"going", IntentUnclear},
		{"go away", IntentUnclear},
		{"stop the deploy and roll back", IntentUnclear},
		{"don't stop", IntentUnclear},
		{"no, wait", IntentUnclear},
		{"> yes", IntentUnclear},
		{"- ok", IntentUnclear},
		{"ok" + strings.Repeat(" ", 40) + "👍", IntentUnclear}, // too long to be a plain answer
		{"🚀", IntentUnclear},
		{":tada:", IntentUnclear},
		{":+1", IntentUnclear},
		{"approve 7k2m9x", IntentUnclear},
		{"/workflow approve 7k2m9x", IntentUnclear},
		{"ye s", IntentUnclear},
		{"y e s", IntentUnclear},
	}
	for _, tt := range tests {
		if got := Classify(tt.in); got != tt.want {
			t.Errorf("Classify(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestClosest(t *testing.T) {
	names := []string{"deploy", "deploy-prod", "fix-issue", "feature", "review"}
	tests := []struct {
		name string
		n    int
		want []string
	}{
		{"deplyo", 3, []string{"deploy"}},
		{"Deploy", 1, []string{"deploy"}},
		{"fix-isue", 3, []string{"fix-issue"}},
		{"deploy-prd", 3, []string{"deploy-prod"}},
		{"deploy-pro", 3, []string{"deploy-prod"}},
		{"reviex", 3, []string{"review"}},
		{"featuer", 3, []string{"feature"}},
		{"reveiw", 3, []string{"review"}},
		{"zzzzzz", 3, []string{}},
		{"deploy", 0, nil},
	}
	for _, tt := range tests {
		got := Closest(tt.name, names, tt.n)
		if len(got) != len(tt.want) {
			t.Errorf("Closest(%q, %d) = %q, want %q", tt.name, tt.n, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("Closest(%q, %d) = %q, want %q", tt.name, tt.n, got, tt.want)
			}
		}
	}
}

func TestClosestOrdersTiesAlphabetically(t *testing.T) {
	got := Closest("abx", []string{"abd", "xyz", "abc"}, 5)
	if len(got) != 2 || got[0] != "abc" || got[1] != "abd" {
		t.Fatalf("Closest = %q, want [abc abd]", got)
	}
}

func TestHelpListsEveryCommand(t *testing.T) {
	help := Help()
	for _, k := range []Kind{KindRun, KindResume, KindAbandon, KindApprove, KindReject, KindStatus, KindList, KindCancel, KindHelp, KindReset} {
		u := Usage(k)
		if u == Usage("") {
			t.Errorf("Usage(%q) is the overview", k)
		}
		if !strings.Contains(help, u) {
			t.Errorf("Help() does not list %q", u)
		}
	}
}
