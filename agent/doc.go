// Package agent holds the AI provider implementations behind the orchestrator's interface: it runs
// one agent turn through a coding-agent CLI, parses the CLI's JSON event stream, and classifies its
// errors where they happen so the orchestrator can decide between retrying, starting a fresh session,
// pausing for an operator, or failing the node.
//
// # Providers
//
// Two providers exist, chosen by name with New (or built directly with a Config):
//
//   - "claude" runs Claude Code: claude -p --output-format stream-json --verbose --permission-mode M
//     [--allowedTools T] [--model M] [--resume SESSION]. The binary is CLAUDE_BIN when set,
//     otherwise "claude" on PATH.
//   - "codex" runs the Codex CLI: codex --ask-for-approval never exec --json --skip-git-repo-check
//     --sandbox S [--model M] [resume SESSION] -. The binary is CODEX_BIN when set, otherwise "codex"
//     on PATH. --skip-git-repo-check is passed because a run's working directory is chosen by the
//     workflow and need not be a Git checkout.
//
// Request.Permissions (read, edit, full; Config.Permissions when empty) picks the permission and
// sandbox flags (permissions.go; docs/workflows.md has the table). full is refused unless
// Config.AllowFull. Tool uses the CLI reports refused fail the turn, naming the tools.
//
// Login and API keys are the CLIs' own business (ANTHROPIC_API_KEY, `claude /login`, OPENAI_API_KEY,
// `codex login`). The process inherits the bot's environment without the bot's secrets and PG*
// variables, plus Request.Env and the turn's tag.
//
// # How a turn runs
//
// The prompt is written to the CLI's standard input, never to argv: prompts can be large and contain
// anything, including text that looks like flags. The process runs in Request.Dir, in its own process
// group, with the environment entry THREADFLOW_AGENT_TURN=<random> (package proctag). The turn is
// bounded by Config.Timeout (AGENT_TIMEOUT) and an idle watchdog (Config.IdleTimeout,
// AGENT_IDLE_TIMEOUT) reset by every output line; when it ends, for whatever reason, every process
// carrying its tag is killed, including those in other sessions or process groups. Only the last
// 4 KiB of standard error are kept, and prompt text is redacted from them before they reach an error.
//
// # Errors
//
// Every failure is an *Error carrying a db.ErrorClass, a short user-safe message, a hint when a
// person can fix the cause, and for a stopped turn the CLI's last error; ClassOf reads the class from
// any error. Classification reads the CLIs' structured fields first (HTTP statuses, error kinds,
// retry notices) and phrases only as a fallback (classify.go). A retry notice that already proves
// the turn hopeless (credentials refused; Codex waiting for a network) stops the CLI at once. A stale
// session (the CLI no longer knows the session being resumed) is db.ClassStaleSession, and the
// failing turn's session id is never handed back, so a caller cannot persist it and fail the same
// way forever.
//
// # Tests
//
// agenttest is a fake CLI speaking both formats; agenttest/stubapi is a loopback model API the real
// CLIs can be pointed at. testdata/transcripts holds the real CLIs' output for each failure case,
// recorded with `go test ./agent -run TestRecordTranscripts -record` and replayed by
// TestTranscripts.
package agent
