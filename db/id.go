package db

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// runIDAlphabet is Crockford's base32 in lower case: no i, l, o or u, so an id read aloud or copied
// from a screenshot is unambiguous, and every character is URL-safe.
const runIDAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// RunIDLength gives 50 random bits: collisions are negligible at chat scale and ids stay short.
const RunIDLength = 10

// MinPrefix is the shortest id prefix a user may type in place of a full run id, in chat and in
// the CLI alike: 30 bits, so a prefix someone remembers does not come to name another run as runs
// accumulate, and approving or abandoning by prefix cannot reach the wrong one.
const MinPrefix = 6

// NewRunID returns a fresh random run id.
func NewRunID() string {
	b := make([]byte, RunIDLength)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	for i := range b {
		b[i] = runIDAlphabet[b[i]&31]
	}
	return string(b)
}

// EventRunID is the id of the run a chat request starts: derived from the platform's event, so the
// same request handled twice (after a crash, by the process that took it over) names the same run,
// and the second creation finds the first instead of starting another. 50 bits of a hash, like a
// random id's.
func EventRunID(platform, eventID string) string {
	sum := sha256.Sum256([]byte("run\x00" + platform + "\x00" + eventID))
	b := make([]byte, RunIDLength)
	for i := range b {
		b[i] = runIDAlphabet[sum[i]&31]
	}
	return string(b)
}

// NewToken returns a random fencing token for a lease.
func NewToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Digest returns the sha256 hex digest of a frozen workflow source.
func Digest(src []byte) string {
	sum := sha256.Sum256(src)
	return hex.EncodeToString(sum[:])
}

// RunIDProblem says why s, in lower case, cannot stand for a run: "" when it is a run id or a
// prefix of at least MinPrefix characters, else the end of a sentence starting "the run id ...".
func RunIDProblem(s string) string {
	switch {
	case len(s) > RunIDLength:
		return fmt.Sprintf("is too long: run ids have %d characters", RunIDLength)
	case !ValidRunIDPrefix(s):
		return "is not valid: run ids use digits and the letters a-z except i, l, o and u"
	case len(s) < MinPrefix:
		return fmt.Sprintf("is too short: type at least %d characters of it", MinPrefix)
	}
	return ""
}

// ValidRunIDPrefix reports whether s could be (a prefix of) a run id.
func ValidRunIDPrefix(s string) bool {
	if s == "" || len(s) > RunIDLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !containsByte(runIDAlphabet, s[i]) {
			return false
		}
	}
	return true
}

func containsByte(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

// ChildRunID is the id of the run a `workflow:` node starts (item is the fan_out item's index, or
// -1 for none): derived from its parent's id and node, so a takeover of the parent, or its resume,
// finds the child the node started instead of starting another.
func ChildRunID(parentID, node string, item int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "child\x00%s\x00%s\x00%d", parentID, node, item))
	b := make([]byte, RunIDLength)
	for i := range b {
		b[i] = runIDAlphabet[sum[i]&31]
	}
	return string(b)
}
