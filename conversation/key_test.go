package conversation_test

import (
	"errors"
	"strings"
	"testing"

	"threadflow/conversation"
)

func TestCheckKey(t *testing.T) {
	tests := []struct {
		name string
		r    conversation.Reply
		ok   bool
	}{
		{"unkeyed", conversation.Reply{}, true},
		{"unkeyed ephemeral", conversation.Reply{Ephemeral: true, ToUser: "slack:U1"}, true},
		{"a run's row", conversation.Reply{Key: "cf4mnfbxfp/gate@12"}, true},
		{"at the bound", conversation.Reply{Key: strings.Repeat("k", conversation.MaxKeyBytes)}, true},
		{"over the bound", conversation.Reply{Key: strings.Repeat("k", conversation.MaxKeyBytes+1)}, false},
		{"keyed ephemeral", conversation.Reply{Key: "k", Ephemeral: true, ToUser: "slack:U1"}, false},
		{"invalid UTF-8", conversation.Reply{Key: "k\xff"}, false},
		{"a newline", conversation.Reply{Key: "k\nforged log line"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := conversation.CheckKey(tt.r)
			if tt.ok != (err == nil) || (err != nil && !errors.Is(err, conversation.ErrBadKey)) {
				t.Errorf("CheckKey = %v, want ok=%v (else ErrBadKey)", err, tt.ok)
			}
		})
	}
}

func TestChunkKeysNeverCollide(t *testing.T) {
	if got := conversation.ChunkKey("run/final", 2); got != "run/final#2" {
		t.Errorf("ChunkKey = %q, want run/final#2", got)
	}
	seen := map[string][2]any{}
	for _, key := range []string{"a", "a#1", "a#1#1", "a#", "#1"} {
		for i := range 12 {
			k := conversation.ChunkKey(key, i)
			if prev, ok := seen[k]; ok {
				t.Fatalf("chunk %d of %q and chunk %v of %q share the key %q", i, key, prev[1], prev[0], k)
			}
			seen[k] = [2]any{key, i}
		}
	}
}
