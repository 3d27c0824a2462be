package main

import (
	"strings"
	"testing"
	"threadflow/testkit/botproc"
)

// The terminal refuses NUL bytes and oversized arguments, in `bot chat` and `bot workflow run`,
// naming the limit, and writes nothing: no run, no thread saying "queued". On both engines.
func TestTerminalRefusesNulAndOversizedArgumentsWritingNothing(t *testing.T) {
	botproc.ForEachEngine(t, cliEnv, func(t *testing.T, env map[string]string) {
		long := strings.Repeat("a", 200_000)
		out, code := cli(t, env, "chat", "/workflow run hello wor\x00ld", "/workflow run hello "+long)
		if code != 0 || !strings.Contains(out, "NUL byte") || !strings.Contains(out, "at most 16000 bytes (MAX_ARGS_BYTES), and this one is 200000 bytes") ||
			strings.Contains(out, "queued") || strings.Contains(out, "try again") {
			t.Fatalf("bot chat = exit %d:\n%s", code, out)
		}
		b := runBot(t, env, "workflow", "run", "hello", long)
		if code := exitCode(b.result(t)); code != 2 || !strings.Contains(b.stderr.String(), "at most 16000 bytes (MAX_ARGS_BYTES)") {
			t.Fatalf("bot workflow run with 200000 bytes of arguments = exit %d, want 2 naming the limit:\n%s", code, b.stderr)
		}
		env["MAX_ARGS_BYTES"] = "1KB"
		out, _ = cli(t, env, "chat", "/workflow run hello "+strings.Repeat("b", 1001), "/workflow status")
		if !strings.Contains(out, "at most 1000 bytes (MAX_ARGS_BYTES)") || !strings.Contains(out, "No runs in this conversation yet") {
			t.Fatalf("after refusals, bot chat printed:\n%s", out)
		}
	})
}
