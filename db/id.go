package db

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
)

// runIDAlphabet is Crockford's base32 in lower case: no i, l, o or u, so an id read aloud or copied
// from a screenshot is unambiguous, and every character is URL-safe.
const runIDAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// RunIDLength gives 50 random bits: collisions are negligible at chat scale and ids stay short.
const RunIDLength = 10

// MinPrefix is the shortest id prefix a user may type in place of a full run id.
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
