package agent

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"threadflow/agent/agenttest/stubapi"
)

// record re-records testdata/transcripts from the real CLIs (see testdata/transcripts/README.md):
//
//	go test ./agent -run TestRecordTranscripts -record
var record = flag.Bool("record", false, "re-record testdata/transcripts from the real claude and codex CLIs")

// realBin finds an installed CLI: CLAUDE_BIN/CODEX_BIN, PATH, or the .ci/run install prefix.
func realBin(name string) string {
	envVar := map[string]string{NameClaude: claudeBinEnv, NameCodex: codexBinEnv}[name]
	if b := os.Getenv(envVar); b != "" {
		return b
	}
	if b, err := exec.LookPath(name); err == nil {
		return b
	}
	b := filepath.Join(ciPrefix, "bin", name)
	if _, err := os.Stat(b); err == nil {
		return b
	}
	return ""
}

// ciPrefix is where .ci/run installs the pinned CLIs.
const ciPrefix = "/opt/threadflow-ai"

// recording is one case: how to set the stub and the environment, and the request.
type recording struct {
	name     string
	mode     stubapi.Mode
	toolFile string
	refused  bool // point the CLI at a port nothing listens on
	loggedIn bool // false: no credentials and no stub at all
	session  string
	perms    Permissions
	env      []string
	killAt   time.Duration // stop the CLI after this long (a hang)
}

var recordings = []recording{
	{name: "success_tool", mode: stubapi.Normal, toolFile: "out.txt", loggedIn: true, perms: PermEdit},
	{name: "not_logged_in", loggedIn: false},
	{name: "unauthorized", mode: stubapi.Unauthorized, loggedIn: true, env: []string{"CLAUDE_CODE_MAX_RETRIES=2"}},
	{name: "overloaded", mode: stubapi.Overloaded, loggedIn: true, env: []string{"CLAUDE_CODE_MAX_RETRIES=2"}},
	{name: "refused", refused: true, loggedIn: true, env: []string{"CLAUDE_CODE_MAX_RETRIES=2"}},
	{name: "unknown_session", mode: stubapi.Normal, loggedIn: true, session: "6f1c1c9e-3a52-4f0b-9d8e-2b7c1a0e9f11"},
	{name: "permission_denied", mode: stubapi.Normal, toolFile: "out.txt", loggedIn: true, perms: PermRead},
	{name: "hang", mode: stubapi.Hang, loggedIn: true, killAt: 8 * time.Second},
}

func TestRecordTranscripts(t *testing.T) {
	only := os.Getenv("RECORD_ONLY")
	if !*record {
		t.Skip("re-record with -record")
	}
	for _, name := range []string{NameClaude, NameCodex} {
		bin := realBin(name)
		if bin == "" {
			t.Fatalf("%s is not installed", name)
		}
		for _, rc := range recordings {
			if only != "" && !strings.Contains(only, name+"/"+rc.name) {
				continue
			}
			t.Run(name+"/"+rc.name, func(t *testing.T) { recordOne(t, name, bin, rc) })
		}
	}
}

func recordOne(t *testing.T, name, bin string, rc recording) {
	api := stubapi.Start(t)
	api.SetMode(rc.mode)
	api.SetToolFile(rc.toolFile)
	tmp := t.TempDir()
	home, dir := filepath.Join(tmp, "home"), filepath.Join(tmp, "wd")
	for _, d := range []string{home, dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=" + filepath.Dir(bin) + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + home}
	base := api.URL()
	if rc.refused {
		base = stubapi.ClosedURL(t)
	}
	switch {
	case name == NameClaude && rc.loggedIn:
		env = append(env, api.ClaudeEnv()...)
		env = append(env, "ANTHROPIC_BASE_URL="+base)
	case name == NameClaude:
		env = append(env, "ANTHROPIC_BASE_URL="+stubapi.ClosedURL(t))
	case rc.loggedIn:
		env = append(env, stubapi.CodexHomeAt(t, tmp, base)...)
	default: // codex with the stub provider but no key
		env = append(env, stubapi.CodexHomeAt(t, tmp, base)[0])
	}
	env = append(env, rc.env...)
	r := Request{Prompt: "Write the file out.txt, then say done.", SessionID: rc.session, Permissions: cmpPerm(rc.perms)}
	args := claudeArgs(r)
	if name == NameCodex {
		args = codexArgs(r, "")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if rc.killAt > 0 {
		ctx, cancel = context.WithTimeout(ctx, rc.killAt)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env, cmd.Dir, cmd.Stdin = env, dir, strings.NewReader(r.Prompt)
	// codex is a Node.js wrapper around a native binary: kill the whole group, or the binary
	// survives holding stdout open.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("%s %s: %v after %s, %d requests", name, rc.name, err, time.Since(start).Round(time.Millisecond), api.Requests())
	out := filepath.Join("testdata", "transcripts", name)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	scrub := strings.NewReplacer(tmp, "/tmp/rec", api.URL(), "http://127.0.0.1:STUB", base, "http://127.0.0.1:CLOSED",
		strings.TrimPrefix(api.URL(), "http://"), "127.0.0.1:STUB", strings.TrimPrefix(base, "http://"), "127.0.0.1:CLOSED")
	write := func(ext, text string) {
		if err := os.WriteFile(filepath.Join(out, rc.name+ext), []byte(scrub.Replace(text)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".jsonl", stdout.String())
	write(".stderr", stderr.String())
}

func cmpPerm(p Permissions) Permissions {
	if p == "" {
		return DefaultPermissions
	}
	return p
}
