package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"threadflow/db"
	"threadflow/db/dbtest"
)

// Chat and the CLI follow one rule for run ids (dispatch.FindRun): a full id or a prefix of at
// least 6 characters that names one run, with the same answers when it names none or several
// (several are listed newest first, on both engines).
func TestRunIDsFollowOneRuleInChatAndCLI(t *testing.T) {
	env := cliEnv(t)
	if _, code := cli(t, env, "workflow", "list"); code != 0 { // creates the database
		t.Fatal("workflow list failed")
	}
	st := dbtest.SQLiteAt(t, filepath.Join(env["THREADFLOW_HOME"], "threadflow.db"), db.Options{})
	ctx := context.Background()
	conv := db.Conversation{ID: "console:elsewhere", Platform: "console", ChannelID: "elsewhere"}
	if _, err := st.EnsureConversation(ctx, conv); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"aaaaaa0001", "aaaaaa0002"} {
		if _, err := st.CreateRun(ctx, db.NewRun{ID: id, Workflow: "hello", ConversationID: conv.ID, ParentConversationID: conv.ID,
			UserID: "console:local", WorkingPath: t.TempDir(), WorkflowSource: []byte("name: hello\nnodes: []\n")}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct{ typed, cli, chat string }{
		{"aaaaaa", `more than one run starts with "aaaaaa"; type more of the id: aaaaaa0002 (hello, queued), aaaaaa0001 (hello, queued)`,
			"More than one run starts with `aaaaaa`; type more of the id:\n• `aaaaaa0002` hello (queued)\n• `aaaaaa0001` hello (queued)"},
		{"bbbbbb", `no run has an id starting with "bbbbbb"; bot workflow runs lists the runs`,
			"No run has an id starting with `bbbbbb`. `/workflow status` lists this conversation's runs."},
		{"aaa", `the run id "aaa" is too short: type at least 6 characters of it`, "is too short: type at least 6 characters of it"},
	} {
		b := runBot(t, env, "workflow", "status", tt.typed)
		if err := b.result(t); exitCode(err) != 2 || !strings.Contains(b.stderr.String(), "threadflow: "+tt.cli) {
			t.Errorf("bot workflow status %s = exit %d, stderr %q; want 2 and %q", tt.typed, exitCode(err), b.stderr, tt.cli)
		}
		if out, _ := cli(t, env, "chat", "/workflow status "+tt.typed); !strings.Contains(out, tt.chat) {
			t.Errorf("/workflow status %s:\n%s\nwant %q", tt.typed, out, tt.chat)
		}
	}
	if out, code := cli(t, env, "workflow", "status", "AAAAAA0001"); code != 0 || !strings.Contains(out, "aaaaaa0001") {
		t.Errorf("a full id in capitals = exit %d:\n%s", code, out)
	}
}
