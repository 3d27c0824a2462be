package web

import (
	"slices"
	"testing"

	"threadflow/commands"
	"threadflow/db"
)

// A run whose workspace is lost offers a fresh start instead of a plain resume, one whose
// WORKSPACE_REMOTE did not answer offers both, and the button sends the command every chat parser
// reads the same way.
func TestLostWorkspaceButton(t *testing.T) {
	t.Parallel()
	lost := db.Run{ID: "7k2m9x4q1c", Status: db.StatusPaused, Meta: db.Meta{Pause: &db.Pause{Kind: db.PauseRecovery, WorkspaceLost: true}}}
	if got := actions(lost); !slices.Equal(got, []string{actionFresh, "abandon"}) {
		t.Errorf("actions of a run whose workspace is lost = %v", got)
	}
	text, ok := buttonCommand(actionFresh, lost.ID, "")
	if !ok || text != "/workflow resume 7k2m9x4q1c --fresh-workspace" {
		t.Fatalf("fresh-workspace button sends %q (%v)", text, ok)
	}
	if c, err := commands.Parse(text); err != nil || !c.FreshWorkspace || c.RunID != lost.ID {
		t.Errorf("the button's command parses as %+v, %v", c, err)
	}
	paused := db.Run{ID: lost.ID, Status: db.StatusPaused, Meta: db.Meta{Pause: &db.Pause{Kind: db.PauseRecovery}}}
	if got := actions(paused); !slices.Equal(got, []string{"resume", "abandon"}) {
		t.Errorf("actions of a recovery pause = %v", got)
	}
	unreachable := db.Run{ID: lost.ID, Status: db.StatusPaused, Meta: db.Meta{Pause: &db.Pause{Kind: db.PauseRecovery, WorkspaceUnreachable: true}}}
	if got := actions(unreachable); !slices.Equal(got, []string{"resume", actionFresh, "abandon"}) {
		t.Errorf("actions of a run whose WORKSPACE_REMOTE did not answer = %v", got)
	}
}
