package execution

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"threadflow/childenv"
	"threadflow/db"
)

// The workspace contract (docs/deploy.md, "Workspaces"): a run's working directory lives in one
// THREADFLOW_HOME, named by the token in that home's marker file and recorded on the run. A replica
// reaches it when it sees the same home, or when the run's workspace is pushed to the WORKSPACE_REMOTE
// the replica has too, from which it recreates it. Nobody else claims the run while a process that
// sees its home is alive; once none is, the run is taken over and, without a remote, learns that its
// workspace is lost.

// HomeMarker is the file in THREADFLOW_HOME that names it.
const HomeMarker = ".threadflow-home"

// remoteName is how git commands name WORKSPACE_REMOTE: its URL reaches git through the
// environment (GIT_CONFIG_*), never the command line, which every user of the host can read in
// /proc, nor a repository's config, which every node can read.
const remoteName = "threadflow-workspace"

// gitTimeout bounds one git command: a remote that hangs must not hold a run forever.
const gitTimeout = 2 * time.Minute

// HomeToken returns the token of home's marker file, writing a new random one when there is none.
// Two processes share a home exactly when they read the same token.
func HomeToken(home string) (string, error) {
	path := filepath.Join(home, HomeMarker)
	if b, err := os.ReadFile(path); err == nil {
		token := strings.TrimSpace(string(b))
		if len(token) < 16 || len(token) > 64 {
			return "", fmt.Errorf("THREADFLOW_HOME marker %s holds no valid token; delete the file so a new one is written", path)
		}
		return token, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read THREADFLOW_HOME marker: %w", err)
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	token := hex.EncodeToString(b)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) { // another process sharing the home wrote it first
		return HomeToken(home)
	}
	if err != nil {
		return "", fmt.Errorf("write THREADFLOW_HOME marker (make THREADFLOW_HOME writable): %w", err)
	}
	_, werr := f.WriteString(token + "\n")
	if err := errors.Join(werr, f.Close()); err != nil {
		return "", fmt.Errorf("write THREADFLOW_HOME marker %s: %w", path, err)
	}
	return token, nil
}

// RedactRemote is a WORKSPACE_REMOTE as it may be shown, logged and stored: without the user
// information of a URL (where a token would be).
func RedactRemote(remote string) string {
	u, err := url.Parse(remote)
	if err != nil || u.User == nil || u.Scheme == "" {
		return remote
	}
	u.User = nil
	return u.String()
}

// HomeProblem is what a process that sees home me.Token (and pushes to me.Remote, "" for none)
// says about the live homes others announced: "" when the deployment keeps the workspace contract
// (every other replica sees the same home, or pushes to the same remote), else a sentence saying
// what is wrong and how to fix it.
func HomeProblem(me db.Home, live []db.Home) string {
	var apart []string
	for _, h := range live {
		if h.Token != me.Token && (me.Remote == "" || h.Remote != me.Remote) {
			apart = append(apart, fmt.Sprintf("%s on %s", h.Owner, h.Host))
		}
	}
	if len(apart) == 0 {
		return ""
	}
	if me.Remote != "" {
		return fmt.Sprintf("this replica does not see the same THREADFLOW_HOME as %s, which do not push to the same WORKSPACE_REMOTE: "+
			"their runs stay with them and are lost with them. Set one WORKSPACE_REMOTE on every replica", strings.Join(apart, ", "))
	}
	return fmt.Sprintf("this replica does not see the same THREADFLOW_HOME as %s (the marker %s holds another token), and "+
		"WORKSPACE_REMOTE is not set: a run stays with the replicas that see its workspace, and is lost with them. "+
		"Mount one shared THREADFLOW_HOME on every replica, or set WORKSPACE_REMOTE on all of them",
		strings.Join(apart, ", "), HomeMarker)
}

func (d Dirs) branch(runID string) string { return "threadflow/" + runID }

// RemoteShown is the WORKSPACE_REMOTE this process pushes to, as recorded on runs.
func (d Dirs) RemoteShown() string { return RedactRemote(d.Remote) }

// describe is the Workspace record of the run's workspace in this process's home.
func (d Dirs) describe(runID string, recreated bool) db.Workspace {
	w := db.Workspace{Home: d.Token, Host: d.Host, Path: d.WorkPath(runID), Remote: d.RemoteShown(), Recreated: recreated}
	if d.RepoPath != "" || d.Remote != "" {
		w.Branch = d.branch(runID)
	}
	return w
}

// Make creates a run's workspace afresh, replacing what an earlier attempt left at its path: a
// directory, a git worktree of REPO_PATH on branch threadflow/<id>, and with WORKSPACE_REMOTE a
// repository on that branch whose commits are pushed there (Save).
func (d Dirs) Make(ctx context.Context, runID string) (db.Workspace, error) {
	if err := d.clear(ctx, runID); err != nil {
		return db.Workspace{}, err
	}
	work, br := d.WorkPath(runID), d.branch(runID)
	switch {
	case d.RepoPath != "":
		if err := d.git(ctx, d.RepoPath, "worktree", "add", "-q", "-B", br, work); err != nil {
			return db.Workspace{}, fmt.Errorf("create git worktree of REPO_PATH for run %s: %w", runID, err)
		}
	case d.Remote != "":
		if err := os.Mkdir(work, 0o755); err != nil {
			return db.Workspace{}, fmt.Errorf("create working directory: %w", err)
		}
		if err := d.git(ctx, work, "init", "-q", "-b", br); err != nil {
			return db.Workspace{}, fmt.Errorf("create the git repository of run %s: %w", runID, err)
		}
	default:
		if err := os.Mkdir(work, 0o755); err != nil {
			return db.Workspace{}, fmt.Errorf("create working directory: %w", err)
		}
	}
	return d.describe(runID, false), nil
}

// Remake is Make for a run an earlier workspace of which was kept on WORKSPACE_REMOTE (a
// --fresh-workspace resume): the new workspace starts as Make's does, and when the run's branch is
// on the remote the new branch continues it, so the first save is a fast-forward that replaces the
// earlier files and keeps their history. A remote that cannot be read is a *RemoteError.
func (d Dirs) Remake(ctx context.Context, runID string) (db.Workspace, error) {
	if d.Remote == "" {
		return d.Make(ctx, runID)
	}
	has, err := d.RemoteHasBranch(ctx, runID)
	if err != nil {
		return db.Workspace{}, err
	}
	w, err := d.Make(ctx, runID)
	if err != nil || !has {
		return w, err
	}
	// --soft: the branch moves to the remote's commit, the files and the index stay the new ones.
	for _, args := range [][]string{{"fetch", "-q", remoteName, "refs/heads/" + d.branch(runID)}, {"reset", "-q", "--soft", "FETCH_HEAD"}} {
		if err := d.git(ctx, w.Path, args...); err != nil {
			return db.Workspace{}, d.remoteError(err)
		}
	}
	return w, nil
}

// Recreate makes a run's workspace from its branch on WORKSPACE_REMOTE: the files as the last
// completed node left them. The remote's URL is never written into the workspace (a token in it
// would be readable by every node). A branch that cannot be fetched is a *RemoteError.
func (d Dirs) Recreate(ctx context.Context, runID string) (db.Workspace, error) {
	if err := d.clear(ctx, runID); err != nil {
		return db.Workspace{}, err
	}
	work, br := d.WorkPath(runID), d.branch(runID)
	if d.RepoPath != "" {
		if err := d.git(ctx, d.RepoPath, "fetch", "-q", remoteName, "+refs/heads/"+br+":refs/heads/"+br); err != nil {
			return db.Workspace{}, d.remoteError(err)
		}
		if err := d.git(ctx, d.RepoPath, "worktree", "add", "-q", work, br); err != nil {
			return db.Workspace{}, fmt.Errorf("recreate git worktree of run %s: %w", runID, err)
		}
		return d.describe(runID, true), nil
	}
	if err := os.Mkdir(work, 0o755); err != nil {
		return db.Workspace{}, fmt.Errorf("create working directory: %w", err)
	}
	if err := d.git(ctx, work, "init", "-q", "-b", br); err != nil {
		return db.Workspace{}, fmt.Errorf("recreate the git repository of run %s: %w", runID, err)
	}
	if err := d.git(ctx, work, "fetch", "-q", remoteName, "refs/heads/"+br); err != nil {
		return db.Workspace{}, d.remoteError(err)
	}
	if err := d.git(ctx, work, "reset", "-q", "--hard", "FETCH_HEAD"); err != nil {
		return db.Workspace{}, fmt.Errorf("recreate run %s's workspace from WORKSPACE_REMOTE: %w", runID, err)
	}
	return d.describe(runID, true), nil
}

// RemoteHasBranch asks WORKSPACE_REMOTE whether it has the run's branch. false with no error means
// the remote answered and has none; a remote that cannot be read is a *RemoteError, never "none":
// a remote that is down must not pass for one that never got the run's workspace.
func (d Dirs) RemoteHasBranch(ctx context.Context, runID string) (bool, error) {
	err := d.git(ctx, d.Home, "ls-remote", "-q", "--exit-code", remoteName, "refs/heads/"+d.branch(runID))
	var exit *exec.ExitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &exit) && exit.ExitCode() == 2: // --exit-code: the remote answered, nothing matched
		return false, nil
	}
	return false, d.remoteError(err)
}

// RemoteError is a git command that could not read WORKSPACE_REMOTE (unreachable, refused, or
// without the run's branch after all): the remote, not this host, is what a person must fix.
type RemoteError struct {
	Remote string // WORKSPACE_REMOTE as it may be shown
	err    error  // git's own words
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("WORKSPACE_REMOTE %s cannot be read from this host: %v", e.Remote, e.err)
}

func (e *RemoteError) Unwrap() error { return e.err }

// remoteError wraps a git command's failure to read the remote.
func (d Dirs) remoteError(err error) *RemoteError {
	return &RemoteError{Remote: d.RemoteShown(), err: err}
}

// clear removes what an earlier workspace of the run left on this host, and the artifacts
// directory is made.
func (d Dirs) clear(ctx context.Context, runID string) error {
	if err := os.RemoveAll(d.WorkPath(runID)); err != nil {
		return fmt.Errorf("remove the old working directory of run %s: %w", runID, err)
	}
	if d.RepoPath != "" {
		if err := d.git(ctx, d.RepoPath, "worktree", "prune"); err != nil {
			return fmt.Errorf("prune worktrees of REPO_PATH: %w", err)
		}
	}
	if err := os.MkdirAll(filepath.Join(d.RunDir(runID), "artifacts"), 0o755); err != nil {
		return fmt.Errorf("create run directory: %w", err)
	}
	return nil
}

// Save commits everything in the workspace at dir and pushes it to the run's branch on
// WORKSPACE_REMOTE, so another host can recreate it as it is now. It is a no-op without a remote.
func (d Dirs) Save(ctx context.Context, runID, dir, message string) error {
	if d.Remote == "" {
		return nil
	}
	steps := [][]string{
		{"add", "-A"},
		{"commit", "-q", "--allow-empty", "--no-verify", "-m", message},
		{"push", "-q", remoteName, "HEAD:refs/heads/" + d.branch(runID)},
	}
	for _, args := range steps {
		if err := d.git(ctx, dir, args...); err != nil {
			return fmt.Errorf("save the workspace of run %s to WORKSPACE_REMOTE: %w", runID, err)
		}
	}
	return nil
}

// git runs the git binary in dir, bounded by gitTimeout, never prompting; its error carries git's
// own words with the remote's credentials taken out.
func (d Dirs) git(ctx context.Context, dir string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = childenv.Environ("GIT_TERMINAL_PROMPT=0", "GIT_AUTHOR_NAME=threadflow", "GIT_AUTHOR_EMAIL=threadflow@localhost",
		"GIT_COMMITTER_NAME=threadflow", "GIT_COMMITTER_EMAIL=threadflow@localhost")
	if d.Remote != "" {
		cmd.Env = append(cmd.Env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=remote."+remoteName+".url", "GIT_CONFIG_VALUE_0="+d.Remote)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if len(msg) > stderrTail {
			msg = msg[len(msg)-stderrTail:]
		}
		if d.Remote != "" {
			msg = strings.ReplaceAll(msg, d.Remote, d.RemoteShown())
		}
		return fmt.Errorf("git %s: %w: %s", args[0], err, msg)
	}
	return nil
}

// CheckRemote proves at start that WORKSPACE_REMOTE answers, so a wrong one is reported before the
// first run needs it.
func (d Dirs) CheckRemote(ctx context.Context) error {
	if d.Remote == "" {
		return nil
	}
	if err := d.git(ctx, d.Home, "ls-remote", "-q", remoteName); err != nil {
		return fmt.Errorf("WORKSPACE_REMOTE %s cannot be read (%v); set it to a git repository every replica can push to: "+
			"a bare repository's path or an https or ssh URL git can use without prompting", d.RemoteShown(), err)
	}
	return nil
}
