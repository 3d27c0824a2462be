// Package agent holds the AI provider implementations behind the orchestrator's interface: it runs
// one agent turn through a coding-agent CLI, parses the CLI's JSON event stream, and classifies its
// errors where they happen so the orchestrator can decide between retrying, starting a fresh session,
// pausing for an operator, or failing the node.
//
// # Providers
//
// Two providers exist, chosen by name with New:
//
//   - "claude" runs Claude Code: claude -p --output-format stream-json --verbose [--model M]
//     [--resume SESSION]. The binary is CLAUDE_BIN when set, otherwise "claude" on PATH.
//   - "codex" runs the Codex CLI: codex exec --json --skip-git-repo-check [--model M] [resume SESSION] -.
//     The binary is CODEX_BIN when set, otherwise "codex" on PATH. --skip-git-repo-check is passed
//     because a run's working directory is chosen by the workflow and need not be a Git checkout.
//
// Login and API keys are the CLIs' own business (ANTHROPIC_API_KEY, `claude /login`, OPENAI_API_KEY,
// `codex login`); the process inherits the bot's environment plus Request.Env.
//
// # How a turn runs
//
// The prompt is written to the CLI's standard input, never to argv: prompts can be large and contain
// anything, including text that looks like flags. The process runs in Request.Dir, in its own process
// group, so cancelling the context kills the CLI and every tool it started. Only the last 4 KiB of
// standard error are kept, and prompt text is redacted from them before they reach an error.
//
// # Errors
//
// Every failure is an *Error carrying a db.ErrorClass and a short user-safe message; ClassOf reads the
// class from any error. A stale session (the CLI no longer knows the session being resumed) is
// db.ClassStaleSession, and the failing turn's session id is never handed back, so a caller cannot
// persist it and fail the same way forever.
package agent
