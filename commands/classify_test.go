package commands

import (
	"strings"
	"testing"
)

// TestReadAnswer fixes what real replies at a gate do. Approvals and rejections may carry a note
// or reason after the clear phrase; everything mixed, conditional, questioning or simply unclear
// resolves nothing.
func TestReadAnswer(t *testing.T) {
	t.Parallel()
	approve := func(note string) Answer { return Answer{Intent: IntentApprove, Note: note} }
	reject := func(reason string) Answer { return Answer{Intent: IntentReject, Note: reason} }
	tests := []struct {
		in   string
		want Answer
	}{
		// Bare approvals, with the decorations people add.
		{"approve", approve("")},
		{"Approved", approve("")},
		{"  LGTM  ", approve("")},
		{"lgtm!", approve("")},
		{"yes", approve("")},
		{"Yes.", approve("")},
		{"y", approve("")},
		{"yep!!", approve("")},
		{"ok", approve("")},
		{"okay :)", approve("")},
		{"go", approve("")},
		{"Go ahead", approve("")},
		{"go  ahead!", approve("")},
		{"ship it 🚀", approve("")},
		{"proceed", approve("")},
		{"continue…", approve("")},
		{"yes, please", approve("")},
		{"yes please, thanks!", approve("")},
		{"sounds good", approve("")},
		{"👍", approve("")},
		{"👍🏽", approve("")},
		{"👍👍", approve("")},
		{"✅", approve("")},
		{"✔️", approve("")},
		{":+1:", approve("")},
		{":thumbsup:", approve("")},
		{"lgtm :tada:", approve("")},
		{"🎉 approve", approve("")},
		{"+1", approve("")},
		// Approvals with a note: the words after the clear phrase, as typed.
		{"lgtm, ship it", approve("ship it")},
		{"LGTM, Ship It!", approve("Ship It!")},
		{"lgtm ship it", approve("ship it")},
		{"Approved - nice work on the changelog", approve("nice work on the changelog")},
		{"yes, go ahead", approve("go ahead")},
		{"approved: release notes look great", approve("release notes look great")},
		{"👍 great job", approve("great job")},
		// Other languages' common yes.
		{"ja", approve("")},
		{"Oui", approve("")},
		{"sí", approve("")},
		{"да", approve("")},
		{"はい", approve("")},
		{"好的", approve("")},
		// Bare rejections.
		{"reject", reject("")},
		{"Rejected.", reject("")},
		{"no", reject("")},
		{"NO!", reject("")},
		{"n", reject("")},
		{"nope", reject("")},
		{"nah", reject("")},
		{"stop", reject("")},
		{"cancel", reject("")},
		{"abort!", reject("")},
		{"deny", reject("")},
		{"don’t", reject("")},
		{"👎", reject("")},
		{"❌", reject("")},
		{":-1:", reject("")},
		{":x:", reject("")},
		{"no 👎", reject("")},
		{"-1", reject("")},
		// Rejections with a reason.
		{"nah, fix the tests first", reject("fix the tests first")},
		{"no, don't ship it", reject("don't ship it")},
		{"No. The migration is not reversible", reject("The migration is not reversible")},
		{"reject: tests are red", reject("tests are red")},
		{"rejected, wrong version", reject("wrong version")},
		{"nope - changelog is missing", reject("changelog is missing")},
		{"no; stop", reject("stop")},
		{"don't ship it", reject("")},
		{"do not deploy", reject("")},
		{"Nein", reject("")},
		{"нет", reject("")},
		{"いいえ", reject("")},
		// Mixed or contradicting signals never resolve a gate.
		{"lgtm but wait until monday", unclear("")},
		{"I don't approve", unclear("")},
		{"ship it but not on friday", unclear("")},
		{"lgtm, but fix the typo", unclear("")},
		{"yes, no", unclear("")},
		{"yes but change X", unclear("")},
		{"ok no", unclear("")},
		{"not ok", unclear("")},
		{"yes 👎", unclear("")},
		{"👍👎", unclear("")},
		{"no 👍", unclear("")},
		{"no, lgtm actually", unclear("")},
		{"nah jk, ship it", unclear("")},
		{"no, it's fine", unclear("")},
		{"approve after the freeze", unclear("")},
		{"yes if CI is green", unclear("")},
		{"lgtm once bob signs off", unclear("")},
		{"lgtm, no concerns", unclear("")},
		{"looks good, don't merge yet", unclear("")},
		{"ok, hold on", unclear("")},
		{"lgtm, isn’t it", unclear("")},
		{"ja, aber nicht heute", unclear("")},
		// Questions.
		{"yes?", unclear("")},
		{"approve?", unclear("")},
		{"should I approve", unclear("")},
		{"is this the right version?", unclear("")},
		{"lgtm? or should we wait", unclear("")},
		{"¿sí", unclear("")},
		// Anything else unclear: sentences, quotes, lookalikes, bare decoration.
		{"", unclear("")},
		{"   ", unclear("")},
		{"no idea what this does", unclear("")},
		{"no problem", unclear("")},
		{"yesterday", unclear("")},
		{"nobody", unclear("")},
		{"going", unclear("")},
		{"go away", unclear("")},
		{"stop the deploy and roll back", unclear("")},
		{"don't stop", unclear("")},
		{"no, wait", unclear("")},
		{"no, not yet", unclear("")},
		{"nope, hold off until tomorrow", unclear("")},
		{"> yes", unclear("")},
		{"- ok", unclear("")},
		{"🚀", unclear("")},
		{":tada:", unclear("")},
		{":+1", unclear("")},
		{"approve 7k2m9x", unclear("")},
		{"/workflow approve 7k2m9x", unclear("")},
		{"ye s", unclear("")},
		{"y e s", unclear("")},
		{"let me check with the team first", unclear("")},
		{"hmm", unclear("")},
		{"ok" + strings.Repeat(" fine", 100), unclear("")},
	}
	if len(tests) < 60 {
		t.Fatalf("only %d replies; the gate's behaviour is fixed by at least 60", len(tests))
	}
	for _, tt := range tests {
		got := ReadAnswer(tt.in)
		if got.Intent != tt.want.Intent || got.Note != tt.want.Note {
			t.Errorf("ReadAnswer(%q) = %v note %q (%s), want %v note %q", tt.in, got.Intent, got.Note, got.Why, tt.want.Intent, tt.want.Note)
		}
		if got.Intent == IntentUnclear && got.Why == "" {
			t.Errorf("ReadAnswer(%q) is unclear without saying why", tt.in)
		}
	}
}

func TestUnclearSaysWhy(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"lgtm but wait until monday": "it adds \u201cbut\u201d",
		"ship it but not on friday":  "it also says \u201cnot\u201d",
		"is this right?":             "it asks a question",
		"👍👎":                         "it says both yes and no",
		"I don't approve":            "it does not start with a clear yes or no",
	}
	for in, want := range tests {
		if got := ReadAnswer(in).Why; got != want {
			t.Errorf("ReadAnswer(%q).Why = %q, want %q", in, got, want)
		}
	}
}

func TestClosest(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	got := Closest("abx", []string{"abd", "xyz", "abc"}, 5)
	if len(got) != 2 || got[0] != "abc" || got[1] != "abd" {
		t.Fatalf("Closest = %q, want [abc abd]", got)
	}
}

func TestHelpListsEveryCommand(t *testing.T) {
	t.Parallel()
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
