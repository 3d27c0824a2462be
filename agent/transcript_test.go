package agent

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"threadflow/db"
)

// The transcripts in testdata/transcripts are the real CLIs' output (claude 2.1.330, codex 0.169.0)
// against the loopback stub API, recorded by TestRecordTranscripts. Each case below replays one
// through the provider's parser and decision, as a turn would see it.

// replay feeds a transcript to a fresh stream the way a turn does: it stops at the first event
// that proves the turn hopeless (the CLI is killed then), and a transcript that ends without a
// result was cut off by the idle watchdog.
func replay(t *testing.T, c cli, file string, r Request) (Result, error, int) {
	t.Helper()
	dir := filepath.Join("testdata", "transcripts", c.name)
	f, err := os.Open(filepath.Join(dir, file+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stderr, err := os.ReadFile(filepath.Join(dir, file+".stderr"))
	if err != nil {
		t.Fatal(err)
	}
	s := c.stream(r)
	var cause error
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxLine)
	for sc.Scan() {
		n++
		if s.line(sc.Bytes()) == hopeless {
			cause = errHopeless
			break
		}
	}
	if file == "hang" {
		cause = errIdle
	}
	r.Permissions = c.cfg.permissions(r.Permissions)
	res, err := c.decide(r, s.verdict(), exit{stderr: string(stderr)}, cause)
	return res, err, n
}

func providerCLI(name string) cli {
	if name == NameClaude {
		return (&Claude{}).cli()
	}
	return (&Codex{}).cli("")
}

func TestTranscripts(t *testing.T) {
	type want struct {
		ok        bool
		class     db.ErrorClass
		msg, hint string // substrings
		stopAt    int    // the event after which the CLI is stopped; 0: it ran to its end
	}
	const stale = "6f1c1c9e-3a52-4f0b-9d8e-2b7c1a0e9f11"
	cases := map[string]map[string]want{
		NameClaude: {
			"success_tool":      {ok: true},
			"not_logged_in":     {class: db.ClassInfra, msg: "not logged in", hint: "claude /login"},
			"unauthorized":      {class: db.ClassInfra, msg: "API error 401 authentication_failed", hint: "ANTHROPIC_API_KEY", stopAt: 2},
			"overloaded":        {class: db.ClassTransient, msg: "Repeated 529 Overloaded"},
			"refused":           {class: db.ClassInfra, msg: "Connection refused", hint: "ANTHROPIC_BASE_URL"},
			"unknown_session":   {class: db.ClassStaleSession, msg: "session expired"},
			"permission_denied": {class: db.ClassPermanent, msg: "refused permission to use Write under permissions: read"},
			"hang":              {class: db.ClassTransient, msg: "printed nothing for 10m0s"},
		},
		NameCodex: {
			"success_tool":      {ok: true},
			"not_logged_in":     {class: db.ClassInfra, msg: "Missing environment variable", hint: "codex login"},
			"unauthorized":      {class: db.ClassInfra, msg: "401 Unauthorized", hint: "OPENAI_API_KEY", stopAt: 4},
			"overloaded":        {class: db.ClassTransient, msg: "at capacity"},
			"refused":           {class: db.ClassInfra, msg: "waiting for network", hint: "base_url", stopAt: 4},
			"unknown_session":   {class: db.ClassStaleSession, msg: "session expired"},
			"permission_denied": {ok: true}, // Codex tells only the model that its sandbox refused (see docs/workflows.md)
			"hang":              {class: db.ClassTransient, msg: "printed nothing for 10m0s"},
		},
	}
	for name, byCase := range cases {
		for file, w := range byCase {
			t.Run(name+"/"+file, func(t *testing.T) {
				r := Request{Prompt: "Write the file out.txt, then say done."}
				if file == "unknown_session" {
					r.SessionID = stale
				}
				if file == "permission_denied" {
					r.Permissions = PermRead
				}
				res, err, n := replay(t, providerCLI(name), file, r)
				if w.ok {
					if err != nil || res.Text != "stub reply: done" || res.SessionID == "" {
						t.Fatalf("turn = %+v, %v; want the stub's reply and a session", res, err)
					}
					return
				}
				var ae *Error
				if !errors.As(err, &ae) {
					t.Fatalf("turn = %+v, %v; want an *Error", res, err)
				}
				t.Logf("%s: %s (hint: %s)", ae.Class, ae.Msg, ae.Hint)
				if ae.Class != w.class || !strings.Contains(ae.Msg, w.msg) || !strings.Contains(ae.Hint, w.hint) {
					t.Errorf("error class %q msg %q hint %q; want %q, containing %q and %q", ae.Class, ae.Msg, ae.Hint, w.class, w.msg, w.hint)
				}
				if w.stopAt != 0 && n != w.stopAt {
					t.Errorf("stopped after event %d, want %d (the first retry notice)", n, w.stopAt)
				}
				if ae.Class == db.ClassStaleSession && ae.SessionID != "" {
					t.Errorf("a stale session error hands back session %q", ae.SessionID)
				}
			})
		}
	}
}
