package conversation

import (
	"strings"
	"testing"
)

func TestOutputLines(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string // one line each: P prose, O open (its info), C code, / close
	}{
		{"prose", "a\nb", "P a|P b"},
		{"block with its info string", "x\n```go\ncode\n```\ny", "P x|O go|C code|/|P y"},
		{"unclosed block closed at the end", "```\ncode", "O |C code|/"},
		{"empty block dropped", "a\n```\n\n```\nb", "P a|P b"},
		{"empty unclosed block dropped", "a\n```sh", "P a"},
		{"blank line is content", "```\n \n```", "O |C  |/"},
		{"a shorter fence does not close", "````\n```\nin\n```\n````", "O |C ```|C in|C ```|/"},
		{"a closing fence has nothing after it", "```\n``` x\n```", "O |C ``` x|/"},
		{"backticks in the info string: not a fence", "```go x```\nb", "P ```go x```|P b"},
		{"indented by four spaces: not a fence", "    ```\nb", "P     ```|P b"},
		{"indented by three: a fence", "   ```\nb", "O |C b|/"},
		{"windows line ends", "```\r\ncode\r\n```\r\nafter", "O |C code\r|/|P after"},
		{"tildes are prose", "~~~\nx\n~~~", "P ~~~|P x|P ~~~"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, l := range OutputLines(tt.in) {
				got = append(got, [...]string{"P ", "O ", "C ", "/"}[l.Kind]+l.Text)
			}
			if strings.Join(got, "|") != tt.want {
				t.Errorf("OutputLines(%q) = %q, want %q", tt.in, strings.Join(got, "|"), tt.want)
			}
		})
	}
}
