package execution

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"threadflow/db"
)

// Dirs decides where runs and conversations work. Every run gets its own fresh directory, so two
// runs never share one and a fresh run never inherits an old run's files.
type Dirs struct {
	Home     string // THREADFLOW_HOME
	RepoPath string // REPO_PATH: when set, each run works in a fresh git worktree of it
	Remote   string // WORKSPACE_REMOTE: when set, each completed node's changes are pushed there
	Token    string // the token of Home's marker file (HomeToken)
	Host     string // this host's name, recorded with the workspaces made here
}

// RunDir is the directory that holds a run's work and artifacts directories.
func (d Dirs) RunDir(runID string) string { return filepath.Join(d.Home, "runs", runID) }

// WorkPath is where a run works: $THREADFLOW_HOME/runs/<id>/work (a git worktree on branch
// threadflow/<id> when REPO_PATH or WORKSPACE_REMOTE is set). The dispatcher records it when it
// creates the run; the directory itself is made (Make) when the run first executes, which keeps file
// system work (and git) off the path between a message and its first reply, and the executing
// worker records where it made it.
func (d Dirs) WorkPath(runID string) string { return filepath.Join(d.RunDir(runID), "work") }

// ConversationDir is where the assistant of a conversation works.
func (d Dirs) ConversationDir(conversationID string) (string, error) {
	dir := filepath.Join(d.Home, "conversations", safeName(conversationID))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create conversation directory: %w", err)
	}
	return dir, nil
}

// safeName maps a conversation key to a file name: platform ids contain ':' and may contain more.
// The digest suffix keeps keys that map to the same characters apart.
func safeName(s string) string {
	return readable(s) + "-" + db.Digest([]byte(s))[:8]
}

func readable(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

// Remove deletes the directories of runs that are gone (retention) and, with REPO_PATH, the
// repository's records of their worktrees. Directories of runs that worked on another host stay
// there.
func (d Dirs) Remove(ctx context.Context, runIDs []string) error {
	var errs []error
	for _, id := range runIDs {
		if err := os.RemoveAll(d.RunDir(id)); err != nil {
			errs = append(errs, fmt.Errorf("remove the directory of run %s: %w", id, err))
		}
	}
	if d.RepoPath != "" && len(runIDs) > 0 {
		if err := d.git(ctx, d.RepoPath, "worktree", "prune"); err != nil {
			errs = append(errs, fmt.Errorf("prune worktrees of REPO_PATH: %w", err))
		}
	}
	return errors.Join(errs...)
}
