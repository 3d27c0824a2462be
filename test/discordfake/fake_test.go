package discordfake

import (
	"net/http"
	"strings"
	"testing"
)

// call sends one authorised REST request to the fake and returns the status code.
func call(t *testing.T, s *Server, method, path, body string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bot test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestMessagesRecordAllowedMentionsAndEdits(t *testing.T) {
	s := New(t)
	tests := []struct {
		name, body string
		wantNone   bool
	}{
		{"empty parse list", `{"content":"a","allowed_mentions":{"parse":[]}}`, true},
		{"parse users", `{"content":"b","allowed_mentions":{"parse":["users"]}}`, false},
		{"no allowed_mentions", `{"content":"c"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code := call(t, s, "POST", "/api/v9/channels/7/messages", tt.body); code != 200 {
				t.Fatalf("create = %d", code)
			}
			msgs := s.Messages("7")
			if got := msgs[len(msgs)-1].AllowedMentionsNone; got != tt.wantNone {
				t.Errorf("AllowedMentionsNone = %v, want %v", got, tt.wantNone)
			}
		})
	}
	id := s.Messages("7")[0].ID
	if code := call(t, s, "PATCH", "/api/v9/channels/7/messages/"+id, `{"content":"edited","components":[]}`); code != 200 {
		t.Fatalf("edit = %d", code)
	}
	if m := s.Messages("7")[0]; m.Content != "edited" || m.AllowedMentionsNone {
		t.Errorf("after an edit without allowed_mentions: %+v, want edited and mentions allowed", m)
	}
}

func TestSecondCallbackIsRejectedAndRecorded(t *testing.T) {
	s := New(t)
	id := s.SlashCommand("1", "7", "list", nil) // no session connected: registered, not delivered
	path := "/api/v9/interactions/" + id + "/token-" + id + "/callback"
	if code := call(t, s, "POST", path, `{"type":5}`); code != 204 {
		t.Fatalf("first callback = %d, want 204", code)
	}
	if code := call(t, s, "POST", path, `{"type":5}`); code != 400 {
		t.Fatalf("second callback = %d, want 400", code)
	}
	got := s.InteractionResponses(id)
	if len(got) != 2 || got[0].Kind != KindDeferred || got[1].Kind != KindRejected {
		t.Errorf("responses = %+v, want a deferral then a rejected second answer", got)
	}
	if code := call(t, s, "POST", "/api/v9/interactions/"+id+"/wrong/callback", `{"type":5}`); code != 404 {
		t.Errorf("callback with a wrong token = %d, want 404", code)
	}
}

func TestUnknownRoutesShowInTheDump(t *testing.T) {
	s := New(t)
	if code := call(t, s, "GET", "/api/v9/guilds/1/roles", ""); code != 404 {
		t.Fatalf("unknown route = %d, want 404", code)
	}
	if d := s.Dump(); !strings.Contains(d, "unhandled request: GET /api/v9/guilds/1/roles") {
		t.Errorf("dump does not name the unhandled request:\n%s", d)
	}
}

func TestLateCallbackIsRefusedAsExpired(t *testing.T) {
	s := New(t)
	s.callbackDeadline = 0 // every callback is late
	id := s.SlashCommand("1", "7", "list", nil)
	if s.InteractionSent(id).IsZero() {
		t.Fatal("the fake did not record when it sent the interaction")
	}
	path := "/api/v9/interactions/" + id + "/token-" + id + "/callback"
	if code := call(t, s, "POST", path, `{"type":5}`); code != 404 {
		t.Fatalf("late callback = %d, want 404 (Unknown interaction)", code)
	}
	if got := s.InteractionResponses(id); len(got) != 1 || got[0].Kind != KindExpired {
		t.Errorf("responses = %+v, want one expired callback", got)
	}
}
