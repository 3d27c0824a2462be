package conversation

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestPersonLabel(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 100)
	tests := []struct {
		name string
		p    Person
		want string
	}{
		{"display name", Person{ID: "discord:4567", Name: "Ann Lee"}, "Ann Lee"},
		{"no name: the platform-qualified id", Person{ID: "discord:4567"}, "discord:4567"},
		{"blank name counts as none", Person{ID: "slack:U1", Name: " \n\t\u200b"}, "slack:U1"},
		{"a self-declared name is the id's own: qualified", Person{ID: "web:local", Name: "local"}, "web:local"},
		{"the terminal's name is qualified", Person{ID: "console:local"}, "console:local"},
		{"id without platform", Person{ID: "alice"}, "alice"},
		{"newlines become spaces", Person{ID: "discord:1", Name: "Ann\n\n@everyone\r\nhi"}, "Ann @everyone hi"},
		{"bidi override and zero-width removed", Person{ID: "discord:1", Name: "a\u202eb\u200bc"}, "a b c"},
		{"line separator", Person{ID: "discord:1", Name: "a\u2028b"}, "a b"},
		{"invalid UTF-8 dropped", Person{ID: "discord:1", Name: "a\xffb"}, "ab"},
		{"bounded", Person{ID: "discord:1", Name: long}, strings.Repeat("é", maxNameRunes) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Label(); got != tt.want {
				t.Errorf("Label() = %q, want %q", got, tt.want)
			}
			if sp := tt.p.Span(); sp.Kind != UserText || sp.S != tt.want {
				t.Errorf("Span() = %+v, want user text %q", sp, tt.want)
			}
		})
	}
}

// Whatever a person calls themselves, a label is one bounded line of valid UTF-8 without control or
// format characters, and normalising it again changes nothing (a stored name reads back the same).
func FuzzDisplayName(f *testing.F) {
	for _, s := range []string{"Ann", "a\nb", "\u202e@everyone", strings.Repeat("x", 200), "\xff\xfe", "<@123>\r\n**b**"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := DisplayName(s)
		if !utf8.ValidString(got) || utf8.RuneCountInString(got) > maxNameRunes+1 {
			t.Fatalf("DisplayName(%q) = %q: invalid or longer than %d runes", s, got, maxNameRunes+1)
		}
		for _, r := range got {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.In(r, unicode.Zl, unicode.Zp) {
				t.Fatalf("DisplayName(%q) = %q keeps %U", s, got, r)
			}
		}
		if again := DisplayName(got); again != got {
			t.Fatalf("DisplayName is not stable: %q -> %q -> %q", s, got, again)
		}
	})
}
