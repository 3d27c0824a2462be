package commands

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// DefaultMaxArgsBytes is MAX_ARGS_BYTES when it is not set: 16KB.
const DefaultMaxArgsBytes = 16_000

// Limits bound what one message may carry. They are decided here and checked where a message enters
// (the dispatcher, for every adapter alike; the web chat and `bot workflow run` before they show or
// start anything), so nothing about a refused message is written anywhere.
type Limits struct {
	// MaxArgsBytes bounds the free text a message carries, in bytes: a run's arguments, an approval's
	// note or a rejection's reason, and a message that is not a command (a gate reply, a question to
	// the assistant). 0 means DefaultMaxArgsBytes.
	MaxArgsBytes int
}

// LimitError is a message refused by a limit. Msg names the limit and how to get under it, and never
// quotes the message, so it can be shown as bot-authored text.
type LimitError struct{ Msg string }

func (e *LimitError) Error() string { return e.Msg }

func (l Limits) maxArgs() int {
	if l.MaxArgsBytes <= 0 {
		return DefaultMaxArgsBytes
	}
	return l.MaxArgsBytes
}

// Check checks a whole message: its encoding, then the size of the free text it carries. A command
// that does not parse passes (its parse error is the better answer); its words are bounded by the
// parser.
func (l Limits) Check(text string) error {
	if err := CheckText(text); err != nil {
		return err
	}
	if !IsCommand(text) {
		return l.checkSize("a message", text)
	}
	c, err := Parse(strings.TrimSpace(text))
	if err != nil {
		return l.checkSize("a message", text)
	}
	switch c.Kind {
	case KindRun:
		return l.CheckArgs(c.ArgsText())
	case KindApprove:
		return l.checkSize("an approval's note", c.Text)
	case KindReject:
		return l.checkSize("a rejection's reason", c.Text)
	}
	return nil
}

// CheckArgs checks the arguments of a run ($ARGUMENTS): valid text, and at most MaxArgsBytes.
func (l Limits) CheckArgs(args string) error {
	if err := CheckText(args); err != nil {
		return err
	}
	return l.checkSize("the arguments of a run", args)
}

func (l Limits) checkSize(what, s string) error {
	if n, limit := len(s), l.maxArgs(); n > limit {
		return &LimitError{Msg: fmt.Sprintf("Refused: %s may be at most %d bytes (MAX_ARGS_BYTES), and this one is %d bytes. "+
			"Put long input in a file or the repository and pass its path instead. Nothing was changed.", what, limit, n)}
	}
	return nil
}

// CheckText refuses text no database or chat can keep as it is: bytes that are not valid UTF-8,
// and NUL bytes (PostgreSQL rejects both in text columns, and no shell variable can hold a NUL).
func CheckText(s string) error {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return &LimitError{Msg: fmt.Sprintf("Refused: the message contains a NUL byte (at byte %d), which no run can carry. "+
			"Remove it and send the message again. Nothing was changed.", i+1)}
	}
	if !utf8.ValidString(s) {
		return &LimitError{Msg: fmt.Sprintf("Refused: the message is not valid UTF-8 text (the first invalid byte is byte %d). "+
			"Send it as plain text. Nothing was changed.", firstInvalid(s)+1)}
	}
	return nil
}

// firstInvalid is the offset of the first byte of s that does not start a valid UTF-8 character.
func firstInvalid(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return i
			}
		}
	}
	return len(s)
}
