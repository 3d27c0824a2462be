package orchestrator_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"threadflow/db"
	"threadflow/orchestrator/execution"
	"threadflow/testkit"
)

// git runs the real git binary for a test, skipping the test where there is none.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=t@t", "-c", "user.name=t"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func newRepo(t *testing.T, bare bool) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		testkit.Missing(t, "git is not installed; apt-get install -y git")
	}
	dir := t.TempDir()
	if bare {
		git(t, dir, "init", "-q", "--bare")
		return dir
	}
	git(t, dir, "init", "-q")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "init")
	return dir
}

// twoHosts runs f, for a workspace in a plain directory and in a REPO_PATH worktree, with two hosts
// a and b sharing one WORKSPACE_REMOTE, after host a saved a workspace of run1abcdef holding file.
func twoHosts(t *testing.T, file, content, message string, f func(t *testing.T, remote string, a, b execution.Dirs)) {
	t.Parallel()
	for _, withRepo := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain directory", true: "REPO_PATH worktree"}[withRepo], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			remote := newRepo(t, true)
			a := execution.Dirs{Home: t.TempDir(), Remote: remote, Token: "home-a-0123456789"}
			b := execution.Dirs{Home: t.TempDir(), Remote: remote, Token: "home-b-0123456789"}
			if withRepo {
				a.RepoPath, b.RepoPath = newRepo(t, false), newRepo(t, false)
			}
			w, err := a.Make(ctx, "run1abcdef")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(w.Path, file), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := a.Save(ctx, "run1abcdef", w.Path, message); err != nil {
				t.Fatal(err)
			}
			f(t, remote, a, b)
		})
	}
}

func TestRunsWorkInFreshGitWorktreesWhenRepoPathIsSet(t *testing.T) {
	t.Parallel()
	d := execution.Dirs{Home: t.TempDir(), RepoPath: newRepo(t, false), Token: "home-a-0123456789"}
	w, err := d.Make(context.Background(), "abc123defg")
	if err != nil {
		t.Fatal(err)
	}
	if w.Branch != "threadflow/abc123defg" || w.Path != d.WorkPath("abc123defg") || w.Home != d.Token {
		t.Errorf("workspace = %+v", w)
	}
	if got := git(t, w.Path, "rev-parse", "--abbrev-ref", "HEAD"); got != "threadflow/abc123defg" {
		t.Fatalf("worktree branch = %q, want threadflow/abc123defg", got)
	}
}

// With WORKSPACE_REMOTE, what a node left is pushed, and another host (another home, another
// repository) recreates the workspace with those files; the remote's URL is not written into it.
func TestWorkspaceRecreatedFromRemoteOnAnotherHost(t *testing.T) {
	twoHosts(t, "plan.txt", "step 1\n", "node plan completed", func(t *testing.T, remote string, a, b execution.Dirs) {
		ctx := context.Background()
		before := git(t, remote, "rev-list", "--count", "threadflow/run1abcdef")
		got, err := b.Recreate(ctx, "run1abcdef")
		if err != nil {
			t.Fatal(err)
		}
		if !got.Recreated || got.Home != b.Token || !strings.HasPrefix(got.Path, b.Home) {
			t.Errorf("recreated workspace = %+v", got)
		}
		if b, err := os.ReadFile(filepath.Join(got.Path, "plan.txt")); err != nil || string(b) != "step 1\n" {
			t.Fatalf("plan.txt in the recreated workspace = %q, %v", b, err)
		}
		if cfg := git(t, got.Path, "config", "--list"); strings.Contains(cfg, remote) {
			t.Errorf("the recreated workspace's git config names the remote:\n%s", cfg)
		}
		// The recreated workspace goes on where the first left off: its next save is a fast-forward.
		if err := b.Save(ctx, "run1abcdef", got.Path, "node build completed"); err != nil {
			t.Fatal(err)
		}
		if n := git(t, remote, "rev-list", "--count", "threadflow/run1abcdef"); n != map[string]string{"1": "2", "2": "3"}[before] {
			t.Errorf("remote branch has %s commits after a save on top of %s", n, before)
		}
	})
}

func TestRemoteCredentialsNeverShown(t *testing.T) {
	t.Parallel()
	const remote = "https://bot:s3cr3t-token@git.example.invalid/team/ws.git"
	if got := execution.RedactRemote(remote); strings.Contains(got, "s3cr3t") || got != "https://git.example.invalid/team/ws.git" {
		t.Errorf("RedactRemote = %q", got)
	}
	d := execution.Dirs{Home: t.TempDir(), Remote: remote}
	err := d.CheckRemote(context.Background())
	if err == nil || strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), "WORKSPACE_REMOTE https://git.example.invalid/team/ws.git cannot be read") {
		t.Errorf("CheckRemote error = %v", err)
	}
}

func TestHomeTokenIsStableAndSharedByAHome(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	first, err := execution.HomeToken(home)
	if err != nil {
		t.Fatal(err)
	}
	again, err := execution.HomeToken(home)
	if err != nil || again != first {
		t.Fatalf("second read = %q, %v; want %q", again, err, first)
	}
	other, _ := execution.HomeToken(t.TempDir())
	if other == first {
		t.Fatal("two homes got the same token")
	}
	me := db.Home{Token: first, Owner: "b", Host: "host-b"}
	if p := execution.HomeProblem(me, []db.Home{me, {Token: first, Owner: "c", Host: "host-c"}}); p != "" {
		t.Errorf("replicas sharing a home: %q", p)
	}
	p := execution.HomeProblem(me, []db.Home{me, {Token: other, Owner: "a", Host: "host-a"}})
	if !strings.Contains(p, "does not see the same THREADFLOW_HOME as a on host-a") || !strings.Contains(p, "set WORKSPACE_REMOTE") {
		t.Errorf("replicas on separate homes without a remote: %q", p)
	}
	me.Remote = "file:///srv/ws.git"
	if p := execution.HomeProblem(me, []db.Home{me, {Token: other, Owner: "a", Host: "host-a", Remote: me.Remote}}); p != "" {
		t.Errorf("separate homes with one remote: %q", p)
	}
	if p := execution.HomeProblem(me, []db.Home{me, {Token: other, Owner: "a", Host: "host-a"}}); !strings.Contains(p, "Set one WORKSPACE_REMOTE on every replica") {
		t.Errorf("separate homes, a without the remote: %q", p)
	}
}

// RemoteHasBranch tells "the remote has no such branch" from "the remote cannot be read": only the
// first may let a run start again in a fresh workspace.
func TestRemoteHasBranchTellsAbsentFromUnreadable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	remote := newRepo(t, true)
	d := execution.Dirs{Home: t.TempDir(), Remote: remote, Token: "home-a-0123456789"}
	if has, err := d.RemoteHasBranch(ctx, "run1abcdef"); has || err != nil {
		t.Fatalf("before any save: %v, %v; want false, nil", has, err)
	}
	w, err := d.Make(ctx, "run1abcdef")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Save(ctx, "run1abcdef", w.Path, "node plan completed"); err != nil {
		t.Fatal(err)
	}
	if has, err := d.RemoteHasBranch(ctx, "run1abcdef"); !has || err != nil {
		t.Fatalf("after a save: %v, %v; want true, nil", has, err)
	}
	d.Remote = filepath.Join(t.TempDir(), "no-such-repository")
	has, err := d.RemoteHasBranch(ctx, "run1abcdef")
	var re *execution.RemoteError
	if has || !errors.As(err, &re) || re.Remote != d.Remote || !strings.Contains(err.Error(), "does not appear to be a git repository") {
		t.Fatalf("an unreadable remote: %v, %v; want a RemoteError naming it", has, err)
	}
}

// A new workspace of a run whose branch is on the remote (--fresh-workspace) starts without the
// earlier files, and its branch continues the remote's: its first save is a fast-forward that
// replaces them, with their history kept.
func TestRemakeContinuesTheRemoteBranch(t *testing.T) {
	twoHosts(t, "old.txt", "old\n", "old node completed", func(t *testing.T, remote string, a, b execution.Dirs) {
		ctx := context.Background()
		old := git(t, remote, "rev-parse", "threadflow/run1abcdef")

		got, err := b.Remake(ctx, "run1abcdef")
		if err != nil {
			t.Fatal(err)
		}
		if got.Recreated || got.Home != b.Token {
			t.Errorf("remade workspace = %+v", got)
		}
		if _, err := os.Stat(filepath.Join(got.Path, "old.txt")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the new workspace has the earlier workspace's file: %v", err)
		}
		if err := os.WriteFile(filepath.Join(got.Path, "new.txt"), []byte("new\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := b.Save(ctx, "run1abcdef", got.Path, "new node completed"); err != nil {
			t.Fatalf("the new workspace's first save: %v", err)
		}
		if files := git(t, remote, "ls-tree", "--name-only", "threadflow/run1abcdef"); strings.Contains(files, "old.txt") || !strings.Contains(files, "new.txt") {
			t.Errorf("files on the branch after the new save:\n%s", files)
		}
		git(t, remote, "merge-base", "--is-ancestor", old, "threadflow/run1abcdef")
	})
}
