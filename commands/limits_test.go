package commands

import (
	"errors"
	"strings"
	"testing"
)

func TestLimitsRefuseWhatNoRunCanCarry(t *testing.T) {
	t.Parallel()
	l := Limits{MaxArgsBytes: 100}
	long := strings.Repeat("x", 101)
	for _, c := range []struct {
		text, want string
	}{
		{"/workflow run hello a\x00b", "NUL byte (at byte 22)"},
		{"lgtm\x00", "NUL byte (at byte 5)"},
		{"/workflow run hello \xffoops", "not valid UTF-8 text (the first invalid byte is byte 21)"},
		{"/workflow run hello " + long, "the arguments of a run may be at most 100 bytes (MAX_ARGS_BYTES), and this one is 101 bytes"},
		{"/workflow approve abcdef123 " + long, "an approval's note may be at most 100 bytes (MAX_ARGS_BYTES)"},
		{"/workflow reject abcdef123 " + long, "a rejection's reason may be at most 100 bytes"},
		{"please summarise " + long, "a message may be at most 100 bytes"},
		{"/workflow run 'unclosed " + long, "a message may be at most 100 bytes"},
	} {
		err := l.Check(c.text)
		var le *LimitError
		if !errors.As(err, &le) || !strings.Contains(le.Msg, c.want) || !strings.Contains(le.Msg, "Nothing was changed") {
			t.Errorf("Check(%.40q) = %v; want a refusal containing %q", c.text, err, c.want)
		}
		if strings.Contains(err.Error(), "oops") || strings.Contains(err.Error(), "xxxx") {
			t.Errorf("refusal quotes the message: %v", err)
		}
	}
	for _, ok := range []string{"/workflow run hello " + strings.Repeat("é", 50), "/workflow status", "lgtm, ship it", "/workflow run 'unclosed"} {
		if err := l.Check(ok); err != nil {
			t.Errorf("Check(%q) = %v; want nil", ok, err)
		}
	}
	if err := (Limits{}).CheckArgs(strings.Repeat("x", DefaultMaxArgsBytes)); err != nil {
		t.Errorf("arguments of exactly the default limit refused: %v", err)
	}
	if err := (Limits{}).CheckArgs(strings.Repeat("x", DefaultMaxArgsBytes+1)); err == nil {
		t.Error("arguments over the default limit accepted")
	}
}
