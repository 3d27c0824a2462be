package discordfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// send sends one authorised REST request to the fake; the caller closes the answer's body.
func send(t *testing.T, s *Server, method, path, body string) *http.Response {
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
	return resp
}

// call sends one request and returns the status code.
func call(t *testing.T, s *Server, method, path, body string) int {
	t.Helper()
	resp := send(t, s, method, path, body)
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

// callJSON is call that also returns the decoded answer.
func callJSON(t *testing.T, s *Server, method, path, body string) (int, map[string]any) {
	t.Helper()
	resp := send(t, s, method, path, body)
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

// TestEnforcedNonceReturnsTheMessageItMade: with enforce_nonce, a create repeating a nonce returns
// the message that nonce made and creates nothing, until the window ends; without it, or with
// another nonce, each create is a message; a nonce over 25 characters is a 400.
func TestEnforcedNonceReturnsTheMessageItMade(t *testing.T) {
	s := New(t)
	create := func(body string) (int, map[string]any) {
		return callJSON(t, s, "POST", "/api/v10/channels/7/messages", body)
	}
	code, first := create(`{"content":"gate","nonce":"abc","enforce_nonce":true}`)
	if code != 200 || first["nonce"] != "abc" {
		t.Fatalf("create = %d %v", code, first)
	}
	code, again := create(`{"content":"gate, again","nonce":"abc","enforce_nonce":true}`)
	if code != 200 || again["id"] != first["id"] || again["content"] != "gate" || s.Posts("7") != 1 {
		t.Fatalf("repeat = %d %v (%d posts); want message %v unchanged and no new one", code, again, s.Posts("7"), first["id"])
	}
	if _, other := create(`{"content":"gate","nonce":"abc"}`); other["id"] == first["id"] || s.Posts("7") != 2 {
		t.Errorf("a nonce not enforced made no new message: %v", other)
	}
	if _, other := create(`{"content":"gate","nonce":"abd","enforce_nonce":true}`); other["id"] == first["id"] || s.Posts("7") != 3 {
		t.Errorf("another nonce made no new message: %v", other)
	}
	s.ForgetNonces()
	if _, later := create(`{"content":"gate","nonce":"abc","enforce_nonce":true}`); later["id"] == first["id"] || s.Posts("7") != 4 {
		t.Errorf("after the window, the nonce made no new message: %v", later)
	}
	code, tooLong := create(`{"content":"x","nonce":"` + strings.Repeat("n", MaxNonce+1) + `","enforce_nonce":true}`)
	if code != 400 || tooLong["code"] != float64(50035) || !strings.Contains(fmt.Sprint(tooLong["errors"]), "nonce") || s.Posts("7") != 4 {
		t.Errorf("a 26-character nonce = %d %v; want a 400 Invalid Form Body naming the nonce, nothing created", code, tooLong)
	}
	if code, _ := create(`{"content":"x","nonce":12345,"enforce_nonce":true}`); code != 200 {
		t.Errorf("an integer nonce = %d, want 200", code)
	}
}

// TestThreadHasItsMessagesID: a thread started from a message has the message's id, and a second
// one on the same message is refused with code 160004, as on Discord.
func TestThreadHasItsMessagesID(t *testing.T) {
	s := New(t)
	_, m := callJSON(t, s, "POST", "/api/v10/channels/7/messages", `{"content":"root"}`)
	path := fmt.Sprintf("/api/v10/channels/7/messages/%s/threads", m["id"])
	code, th := callJSON(t, s, "POST", path, `{"name":"run"}`)
	if code != 201 || th["id"] != m["id"] {
		t.Fatalf("thread = %d %v; want 201 and the message's id %v", code, th, m["id"])
	}
	if code, second := callJSON(t, s, "POST", path, `{"name":"run"}`); code != 400 || second["code"] != float64(160004) || len(s.Threads()) != 1 {
		t.Errorf("second thread = %d %v; want 400 code 160004 and still one thread", code, second)
	}
}

// TestHoldPostHoldsTheAnswerOrTheMessage: a post held after it is created is in its channel while
// its answer waits; one held before is created only on release.
func TestHoldPostHoldsTheAnswerOrTheMessage(t *testing.T) {
	for _, posted := range []bool{true, false} {
		s := New(t)
		arrived, release := s.HoldPost("held", posted)
		answered := make(chan int)
		go func() { // not send: a goroutine may not end the test
			req, _ := http.NewRequestWithContext(t.Context(), "POST", s.URL()+"/api/v10/channels/7/messages", strings.NewReader(`{"content":"the held one"}`))
			req.Header.Set("Authorization", "Bot test")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				answered <- 0
				return
			}
			resp.Body.Close()
			answered <- resp.StatusCode
		}()
		<-arrived
		if want := map[bool]int{true: 1, false: 0}[posted]; s.Posts("7") != want {
			t.Errorf("posted=%v: %d messages while held, want %d", posted, s.Posts("7"), want)
		}
		release()
		if code := <-answered; code != 200 || s.Posts("7") != 1 {
			t.Errorf("posted=%v: answered %d with %d messages after release, want 200 and one", posted, code, s.Posts("7"))
		}
	}
}
