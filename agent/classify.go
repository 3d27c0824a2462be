package agent

import (
	"regexp"
	"strings"
	"unicode"

	"threadflow/db"
)

// The CLIs report most failures only as text, so classification matches the phrases they are known
// to print. Lists are lower case.
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
	// infraPhrases need an operator: install, log in, fix permissions or keys.
	infraPhrases = []string{
		"not logged in", "please run /login", "codex login", "invalid api key", "invalid x-api-key",
		"authentication_error", "authentication failed", "unauthorized", "permission denied",
		"credit balance is too low",
	}
	// transientPhrases are worth retrying as they are.
	transientPhrases = []string{
		"rate limit", "rate_limit", "too many requests", "overloaded", "internal server error",
		"bad gateway", "service unavailable", "gateway timeout", "timeout", "timed out", "econnreset",
		"connection reset", "econnrefused", "connection refused", "network", "socket hang up",
		"temporarily unavailable", "stream disconnected",
	}
	infraCodes     = regexp.MustCompile(`\b(401|403)\b`)
	transientCodes = regexp.MustCompile(`\b(429|500|502|503|504|529)\b`)
)

// classifyText classifies a failure from the CLI's own words. Stale-session phrases only count when
// the turn resumed a session: a fresh turn cannot have a stale one.
func classifyText(text string, resumed bool) db.ErrorClass {
	lower := strings.ToLower(text)
	switch {
	case resumed && containsAny(lower, stalePhrases):
		return db.ClassStaleSession
	case containsAny(lower, infraPhrases) || infraCodes.MatchString(lower):
		return db.ClassInfra
	case containsAny(lower, transientPhrases) || transientCodes.MatchString(lower):
		return db.ClassTransient
	}
	return db.ClassPermanent
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
