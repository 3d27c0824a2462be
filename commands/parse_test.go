package commands

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want Command
	}{
		{"run plain", `/workflow run deploy`, Command{Kind: KindRun, Workflow: "deploy"}},
		{"run after mention", `workflow run deploy prod`, Command{Kind: KindRun, Workflow: "deploy", Args: []string{"prod"}}},
		{"case-insensitive command words", `/Workflow RUN Deploy`, Command{Kind: KindRun, Workflow: "Deploy"}},
		{"double quotes keep spaces", `/workflow run fix "task B" now`, Command{Kind: KindRun, Workflow: "fix", Args: []string{"task B", "now"}}},
		{"single quotes are literal", `/workflow run fix 'a \"b\" $c'`, Command{Kind: KindRun, Workflow: "fix", Args: []string{`a \"b\" $c`}}},
		{"escapes in double quotes", "/workflow run fix \"say \\\"hi\\\" \\` \\$x \\\\ C:\\dir\"", Command{Kind: KindRun, Workflow: "fix", Args: []string{"say \"hi\" ` $x \\ C:\\dir"}}},
		{"backslash outside quotes", `/workflow run fix a\ b`, Command{Kind: KindRun, Workflow: "fix", Args: []string{"a b"}}},
		{"trailing backslash kept", `/workflow run fix a\`, Command{Kind: KindRun, Workflow: "fix", Args: []string{`a\`}}},
		{"adjacent quoted parts join", `/workflow run fix a"b c"'d'`, Command{Kind: KindRun, Workflow: "fix", Args: []string{"ab cd"}}},
		{"empty quoted argument", `/workflow run fix ""`, Command{Kind: KindRun, Workflow: "fix", Args: []string{""}}},
		{"typographic double quotes", `/workflow run fix “task B” „x‟ «y»`, Command{Kind: KindRun, Workflow: "fix", Args: []string{"task B", "x", "y"}}},
		{"typographic single quotes", `/workflow run fix ‘it is’ ‚z‛`, Command{Kind: KindRun, Workflow: "fix", Args: []string{"it is", "z"}}},
		{"escaped typographic quote is literal", `/workflow run fix "a\”b"`, Command{Kind: KindRun, Workflow: "fix", Args: []string{"a”b"}}},
		{"force before name", `/workflow run --force fix "task B"`, Command{Kind: KindRun, Workflow: "fix", Args: []string{"task B"}, Force: true}},
		{"force after args", `/workflow run fix "task B" --force`, Command{Kind: KindRun, Workflow: "fix", Args: []string{"task B"}, Force: true}},
		{"force between args", `/workflow run fix a --force b`, Command{Kind: KindRun, Workflow: "fix", Args: []string{"a", "b"}, Force: true}},
		{"force typed as em dash on a phone", `/workflow run fix —force a`, Command{Kind: KindRun, Workflow: "fix", Args: []string{"a"}, Force: true}},
		{"-- makes later --force literal", `/workflow run fix --force -- a --force --`, Command{Kind: KindRun, Workflow: "fix", Args: []string{"a", "--force", "--"}, Force: true}},
		{"other options pass through", `/workflow run fix --verbose`, Command{Kind: KindRun, Workflow: "fix", Args: []string{"--verbose"}}},
		{"newlines separate words", "/workflow run fix\na\tb", Command{Kind: KindRun, Workflow: "fix", Args: []string{"a", "b"}}},
		{"resume lower-cases the id", `/workflow resume 7K2M9X4Q1C`, Command{Kind: KindResume, RunID: "7k2m9x4q1c"}},
		{"resume in a fresh workspace", `/workflow resume 7k2m9x --fresh-workspace`, Command{Kind: KindResume, RunID: "7k2m9x", FreshWorkspace: true}},
		{"fresh workspace before the id, with a phone's dash", `/workflow resume —fresh-workspace 7k2m9x`, Command{Kind: KindResume, RunID: "7k2m9x", FreshWorkspace: true}},
		{"abandon by prefix", `/workflow abandon 7k2m9x`, Command{Kind: KindAbandon, RunID: "7k2m9x"}},
		{"approve without comment", `/workflow approve 7k2m9x`, Command{Kind: KindApprove, RunID: "7k2m9x"}},
		{"approve comment kept as typed", `/workflow approve 7k2m9x  don't "break" it `, Command{Kind: KindApprove, RunID: "7k2m9x", Text: `don't "break" it`}},
		{"approve with a quoted reply", `/workflow approve 7k2m9x --reply 12`, Command{Kind: KindApprove, RunID: "7k2m9x", Reply: 12}},
		{"reject with a quoted reply", `/workflow reject 7k2m9x --reply 3`, Command{Kind: KindReject, RunID: "7k2m9x", Reply: 3}},
		{"a comment that mentions --reply later", `/workflow approve 7k2m9x see --reply 3`, Command{Kind: KindApprove, RunID: "7k2m9x", Text: "see --reply 3"}},
		{"reject reason", "/workflow reject 7k2m9x too risky\nsee logs", Command{Kind: KindReject, RunID: "7k2m9x", Text: "too risky\nsee logs"}},
		{"status of conversation", `/workflow status`, Command{Kind: KindStatus}},
		{"status of a run", `/workflow status 7k2m9x4`, Command{Kind: KindStatus, RunID: "7k2m9x4"}},
		{"top-level status", `/status 7k2m9x`, Command{Kind: KindStatus, RunID: "7k2m9x"}},
		{"list", `/workflow list`, Command{Kind: KindList}},
		{"cancel latest", `/workflow cancel`, Command{Kind: KindCancel}},
		{"cancel a run", `/workflow cancel 7k2m9x`, Command{Kind: KindCancel, RunID: "7k2m9x"}},
		{"help", `/workflow help`, Command{Kind: KindHelp}},
		{"top-level help", `/help`, Command{Kind: KindHelp}},
		{"reset", ` /reset `, Command{Kind: KindReset}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Parse(%q) = %#v, want %#v", tt.in, got, tt.want)
			}
			assertRoundTrip(t, got)
		})
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		msg     string // substring of the message
		col     int
		usageOf Kind
	}{
		{"unclosed double quote names its column", `/workflow run deploy "task B`, `unclosed " starting at column 22`, 22, KindRun},
		{"unclosed typographic quote", `/workflow run deploy “task B`, `unclosed “ starting at column 22`, 22, KindRun},
		{"unclosed apostrophe", `/workflow run fix don't`, `unclosed ' starting at column 22`, 22, KindRun},
		{"unclosed quote in a run id", `/workflow resume "7k2m9x`, `unclosed "`, 18, KindResume},
		{"run without a name", `/workflow run`, "missing workflow name", 0, KindRun},
		{"run with only --force", `/workflow run --force`, "missing workflow name", 0, KindRun},
		{"name that looks like an option", `/workflow run -f deploy`, `starts with "-"`, 15, KindRun},
		{"empty name", `/workflow run "" x`, "is empty", 15, KindRun},
		{"name with a space", `/workflow run "a b"`, "contains spaces", 15, KindRun},
		{"name too long", `/workflow run ` + strings.Repeat("a", 129), "longer than 128", 15, KindRun},
		{"resume without id", `/workflow resume`, "missing run id", 0, KindResume},
		{"approve without id", `/workflow approve`, "missing run id", 0, KindApprove},
		{"reply without a number", `/workflow approve 7k2m9x --reply`, "takes the number of a reply", 26, KindApprove},
		{"reply that is not a number", `/workflow reject 7k2m9x --reply twelve`, "takes the number of a reply", 25, KindReject},
		{"reply with more text", `/workflow approve 7k2m9x --reply 12 ok`, "unexpected argument", 37, KindApprove},
		{"id too short", `/workflow resume 7k2m9`, "too short: type at least 6", 18, KindResume},
		{"id too long", `/workflow abandon 7k2m9x4q1c9`, "too long", 19, KindAbandon},
		{"id with letters ids never use", `/workflow resume 7k2m9l`, "not valid", 18, KindResume},
		{"id that is a mention", `/workflow approve <@U123>`, "not valid", 19, KindApprove},
		{"extra argument to resume", `/workflow resume 7k2m9x now`, "unexpected argument at column 25", 25, KindResume},
		{"unknown option of resume", `/workflow resume 7k2m9x --fresh`, "unknown option at column 25: resume takes only --fresh-workspace", 25, KindResume},
		{"fresh workspace twice", `/workflow resume 7k2m9x --fresh-workspace --fresh-workspace`, "unknown option at column 43", 43, KindResume},
		{"fresh workspace without an id", `/workflow resume --fresh-workspace`, "missing run id", 0, KindResume},
		{"fresh workspace on abandon", `/workflow abandon 7k2m9x --fresh-workspace`, "unexpected argument at column 26", 26, KindAbandon},
		{"extra argument to list", `/workflow list all`, "unexpected argument at column 16", 16, KindList},
		{"extra argument to reset", `/reset all`, "unexpected argument", 8, KindReset},
		{"unknown subcommand", `/workflow strat deploy`, "unknown subcommand at column 11", 11, ""},
		{"typo of a subcommand", `/workflow rnu hello`, `unknown subcommand at column 11 (did you mean "run"?)`, 11, ""},
		{"bare /workflow", `/workflow`, "missing subcommand", 1, ""},
		{"not a command", `hello there`, "not a command", 1, ""},
		{"empty", "   ", "empty", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.in)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) error = %v, want a *ParseError", tt.in, err)
			}
			if !strings.Contains(pe.Msg, tt.msg) || pe.Col != tt.col || pe.Usage != Usage(tt.usageOf) {
				t.Fatalf("Parse(%q) = {Msg: %q, Col: %d, Usage: %q}, want Msg containing %q, Col %d, Usage %q",
					tt.in, pe.Msg, pe.Col, pe.Usage, tt.msg, tt.col, Usage(tt.usageOf))
			}
			if !strings.Contains(err.Error(), pe.Usage) {
				t.Fatalf("Error() = %q does not show the usage", err.Error())
			}
		})
	}
}

func TestParseErrorNeverEchoesUserText(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`/workflow <!channel>`, `/workflow resume @everyone`, `/workflow run "@here x`, `@here`} {
		_, err := Parse(in)
		if err == nil {
			t.Fatalf("Parse(%q) succeeded", in)
		}
		for _, bad := range []string{"channel", "everyone", "here"} {
			if strings.Contains(err.Error(), bad) {
				t.Fatalf("Parse(%q) error %q echoes user text", in, err)
			}
		}
	}
}

func TestIsCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"/workflow run x", true},
		{"  /WORKFLOW", true},
		{"/status", true},
		{"/reset", true},
		{"/help me", true},
		{"workflow run x", true},
		{"workflow", false},
		{"the workflow failed", false},
		{"/workflows", false},
		{"/statusx", false},
		{"", false},
		{"hello", false},
	}
	for _, tt := range tests {
		if got := IsCommand(tt.in); got != tt.want {
			t.Errorf("IsCommand(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestStringIsCanonical(t *testing.T) {
	t.Parallel()
	tests := []struct {
		c    Command
		want string
	}{
		{Command{Kind: KindRun, Workflow: "fix", Args: []string{"task B"}, Force: true}, `/workflow run fix --force "task B"`},
		{Command{Kind: KindRun, Workflow: "fix", Args: []string{"a", "--force"}}, `/workflow run fix -- a --force`},
		{Command{Kind: KindRun, Workflow: "fix", Args: []string{"say `rm` \"x\" $HOME \\"}}, "/workflow run fix \"say \\`rm\\` \\\"x\\\" \\$HOME \\\\\""},
		{Command{Kind: KindResume, RunID: "7k2m9x4q1c"}, "/workflow resume 7k2m9x4q1c"},
		{Command{Kind: KindResume, RunID: "7k2m9x4q1c", FreshWorkspace: true}, "/workflow resume 7k2m9x4q1c --fresh-workspace"},
		{Command{Kind: KindApprove, RunID: "7k2m9x", Text: "ship it"}, "/workflow approve 7k2m9x ship it"},
		{Command{Kind: KindReject, RunID: "7k2m9x", Reply: 7}, "/workflow reject 7k2m9x --reply 7"},
		{Command{Kind: KindStatus}, "/workflow status"},
		{Command{Kind: KindReset}, "/reset"},
	}
	for _, tt := range tests {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
		assertRoundTrip(t, tt.c)
	}
}

func TestArgsText(t *testing.T) {
	t.Parallel()
	c, err := Parse(`/workflow run fix "task  B" --force  now`)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.ArgsText(); got != "task  B now" {
		t.Fatalf("ArgsText() = %q, want %q", got, "task  B now")
	}
}

func TestQuote(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"deploy", "deploy"},
		{"a-b_c.d/e:f=g@h,i+j%k", "a-b_c.d/e:f=g@h,i+j%k"},
		{"héllo", "héllo"},
		{"", `""`},
		{"task B", `"task B"`},
		{`say "hi"`, `"say \"hi\""`},
		{"back`tick", "\"back\\`tick\""},
		{`$HOME`, `"\$HOME"`},
		{`C:\dir`, `"C:\\dir"`},
		{"it's", `"it's"`},
		{"“smart”", `"\“smart\”"`},
		{"line\nbreak", "\"line\nbreak\""},
	}
	for _, tt := range tests {
		if got := Quote(tt.in); got != tt.want {
			t.Errorf("Quote(%q) = %s, want %s", tt.in, got, tt.want)
		}
		c, err := Parse("/workflow run x -- " + Quote(tt.in))
		if err != nil || len(c.Args) != 1 || c.Args[0] != tt.in {
			t.Errorf("Quote(%q) does not parse back: %#v, %v", tt.in, c.Args, err)
		}
	}
}

// assertRoundTrip checks that the canonical text of c parses back to c.
func assertRoundTrip(t *testing.T, c Command) {
	t.Helper()
	back, err := Parse(c.String())
	if err != nil {
		t.Fatalf("Parse(%q) of the canonical text failed: %v", c.String(), err)
	}
	if !reflect.DeepEqual(back, c) {
		t.Fatalf("Parse(%q) = %#v, want %#v", c.String(), back, c)
	}
}
