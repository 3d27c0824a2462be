package agent

import (
	"strings"
	"testing"
)

func TestLineWriterSplitsAcrossWrites(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   []string
	}{
		{"one write", []string{"a\nb\n"}, []string{"a", "b"}},
		{"split mid-line", []string{`{"ty`, `pe":1}` + "\n{", "}\n"}, []string{`{"type":1}`, "{}"}},
		{"blank lines skipped", []string{"\n\n  \nx\n"}, []string{"x"}},
		{"unterminated last line", []string{"a\nlast"}, []string{"a", "last"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			w := &lineWriter{onLine: func(b []byte) { got = append(got, string(b)) }}
			for _, s := range tt.writes {
				if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			w.flush()
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("lines = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLineWriterDropsOverlongLine(t *testing.T) {
	var got []string
	w := &lineWriter{onLine: func(b []byte) { got = append(got, string(b)) }}
	chunk := strings.Repeat("x", 1<<20)
	for range maxLine>>20 + 1 {
		w.Write([]byte(chunk))
	}
	w.Write([]byte("\nnext\n"))
	if len(got) != 1 || got[0] != "next" {
		t.Errorf("got %d lines (first %.20q), want only the line after the overlong one", len(got), got)
	}
}

func TestTailBufferKeepsTheEnd(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"under the cap", []string{"ab", "cd"}, "abcd"},
		{"small writes past the cap", []string{"abc", "def", "gh"}, "efgh"},
		{"one big write", []string{"0123456789"}, "6789"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &tailBuffer{max: 4}
			for _, s := range tt.writes {
				b.Write([]byte(s))
			}
			if b.String() != tt.want {
				t.Errorf("tail = %q, want %q", b.String(), tt.want)
			}
		})
	}
}
