package agent

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"threadflow/db"
)

// Classification reads the CLIs' machine-readable fields first and their words only as a fallback.
// The fields (docs/workflows.md has the table):
//
//   - Claude Code: the HTTP status (result.api_error_status, system/api_retry error_status), the
//     error kind (assistant.error, api_retry error: authentication_failed, billing_error,
//     rate_limit, overloaded, server_error, ...), and the result subtype.
//   - Codex: the status in "unexpected status NNN" of its error and turn.failed events (it prints no
//     separate field), and its "Reconnecting... waiting for network" notices.

// reason is why a turn failed, finer than its class: it picks the hint a person is given.
type reason int

const (
	reasonOther      reason = iota
	reasonLogin             // not logged in, key rejected, no credit: someone must log the CLI in
	reasonConnection        // the API cannot be reached from this host
	reasonBusy              // overloaded, rate limited, 5xx: retrying later helps
	reasonStale             // the resumed session no longer exists
	reasonSetup             // a configuration the CLI needs is missing
)

// signals is what a turn's output says about its failure.
type signals struct {
	status int    // HTTP status of the API's answer; 0 when there was none or it is unknown
	kind   string // the CLI's error kind, e.g. authentication_failed
	text   string // the CLI's own error text and stderr
	// noResponse: the CLI says no HTTP answer came at all (connection failed), though not why.
	noResponse bool
}

// Error kinds the CLIs report, by what they mean.
var (
	loginKinds = []string{"authentication_failed", "authentication_error", "billing_error", "permission_error", "oauth_org_not_allowed"}
	busyKinds  = []string{"rate_limit", "rate_limit_error", "overloaded", "overloaded_error", "server_error", "api_error"}
)

// The phrases, lower case, used only when no field decides.
var (
	// stalePhrases mean the session being resumed no longer exists (expired, pruned, other host).
	stalePhrases = []string{
		"no conversation found with session id", // claude --resume
		"no saved session found",                // codex resume
		"no rollout found",                      // codex exec resume: thread/resume failed
		"thread/resume failed",
		"state db missing rollout path",
		"unknown session",
		"session not found",
	}
	loginPhrases = []string{
		"not logged in", "please run /login", "codex login", "invalid api key", "invalid x-api-key",
		"incorrect api key", "authentication_error", "authentication failed", "unauthorized",
		"credit balance is too low", "missing environment variable", // codex: the provider's key is not set
	}
	connectionPhrases = []string{
		"econnrefused", "connection refused", "unable to connect", "waiting for network", "connection failed",
		"enotfound", "getaddrinfo", "network is unreachable", "no route to host", "eai_again",
		"certificate", "error sending request",
	}
	setupPhrases = []string{"permission denied"}
	busyPhrases  = []string{
		"rate limit", "rate_limit", "too many requests", "overloaded", "at capacity", "internal server error",
		"bad gateway", "service unavailable", "gateway timeout", "timeout", "timed out", "econnreset",
		"connection reset", "socket hang up", "temporarily unavailable", "stream disconnected", "network",
	}
	statusPattern = regexp.MustCompile(`(?i)(?:unexpected status|api error:|status(?: code)?:?)\s*(\d{3})\b`)
	loginCodes    = regexp.MustCompile(`\b(401|403)\b`)
	busyCodes     = regexp.MustCompile(`\b(408|429|500|502|503|504|529)\b`)
)

// classify decides the class of a failed turn. Stale-session evidence only counts when the turn
// resumed a session: a fresh turn cannot have a stale one.
func classify(s signals, resumed, staleShape bool) (db.ErrorClass, reason) {
	lower := strings.ToLower(s.text)
	if resumed && (staleShape || containsAny(lower, stalePhrases)) {
		return db.ClassStaleSession, reasonStale
	}
	status := s.status
	if status == 0 {
		status = statusIn(s.text)
	}
	switch {
	case containsAny(strings.ToLower(s.kind), loginKinds), status == 401, status == 403:
		return db.ClassInfra, reasonLogin
	case status == 408, status == 429, status >= 500 && status <= 599:
		return db.ClassTransient, reasonBusy
	case containsAny(lower, connectionPhrases):
		return db.ClassInfra, reasonConnection
	case containsAny(lower, loginPhrases), loginCodes.MatchString(lower):
		return db.ClassInfra, reasonLogin
	case containsAny(lower, setupPhrases):
		return db.ClassInfra, reasonSetup
	case containsAny(strings.ToLower(s.kind), busyKinds), containsAny(lower, busyPhrases), busyCodes.MatchString(lower):
		return db.ClassTransient, reasonBusy
	case s.noResponse:
		return db.ClassInfra, reasonConnection
	}
	return db.ClassPermanent, reasonOther
}

// classifyText classifies from words alone (tests and the fallback path).
func classifyText(text string, resumed bool) db.ErrorClass {
	c, _ := classify(signals{text: text}, resumed, false)
	return c
}

// statusIn finds an HTTP status the CLI quoted in its error text ("unexpected status 401").
func statusIn(text string) int {
	m := statusPattern.FindStringSubmatch(text)
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(m[1])
	if err != nil { // the pattern matched digits too many for an int: no status
		return 0
	}
	return n
}

// fatalRetry reports whether a retry notice already proves the turn cannot succeed: the API
// refused the credentials. The CLI would go on retrying for minutes; there is no point waiting.
func fatalRetry(s signals) bool {
	c, r := classify(s, false, false)
	return c == db.ClassInfra && r == reasonLogin
}

func containsAny(s string, phrases []string) bool {
	for _, p := range phrases {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// maxDetail bounds the CLI text quoted in a chat message.
const maxDetail = 200

// detail turns the first non-empty line of a CLI message into a short, single-line quote.
func detail(text string) string {
	line := ""
	for l := range strings.Lines(text) {
		if l = strings.TrimSpace(l); l != "" {
			line = l
			break
		}
	}
	line = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(line, "?"))
	if r := []rune(line); len(r) > maxDetail {
		line = string(r[:maxDetail]) + "…"
	}
	return line
}

// redact removes prompt text a CLI may have echoed into stderr, so it never reaches logs or chat.
// Short lines are left alone: they are too common to be the prompt's and would mangle the message.
func redact(stderr, prompt string) string {
	const minLine = 12
	if len(prompt) >= minLine && strings.Contains(stderr, prompt) {
		stderr = strings.ReplaceAll(stderr, prompt, "[prompt]")
	}
	for l := range strings.Lines(prompt) {
		if l = strings.TrimSpace(l); len(l) >= minLine && strings.Contains(stderr, l) {
			stderr = strings.ReplaceAll(stderr, l, "[prompt]")
		}
	}
	return stderr
}
