package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/oauth2-proxy/mockoidc"

	"threadflow/adapters/web/signin"
	"threadflow/audit"
	"threadflow/db"
)

// oidcSignIn is sign-in through a real OpenID Connect provider on loopback, which signs in
// slack:U1 ("alice").
func oidcSignIn(t *testing.T, base string) *signin.Service {
	op, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Shutdown() })
	op.QueueUser(&mockoidc.MockUser{Subject: "U1", PreferredUsername: "alice"})
	c := op.Config()
	p, err := signin.OIDC(context.Background(), c.Issuer, c.ClientID, c.ClientSecret, "sub", "slack")
	if err != nil {
		t.Fatal(err)
	}
	s, err := signin.New(signin.Config{BaseURL: base, Secret: []byte(strings.Repeat("k", signin.MinSecret)), Providers: []*signin.Provider{p}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// With sign-in configured, the dashboard acts only as the person signed in: a browser without a
// session is sent to sign in, DASHBOARD_TOKEN alone reads but does not act, and picking a name is
// refused. What the signed-in person does is recorded under their Slack id, as signed in.
func TestSignedInDashboardActsAsThePerson(t *testing.T) {
	const token = "machine-token"
	r := newRig(t, rigOptions{token: token, signIn: oidcSignIn})

	anon := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := anon.Get(r.srv.URL + "/chat")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/signin/?next=%2Fchat" {
		t.Fatalf("a browser without a session: %d to %q, want 303 to /signin/ remembering /chat", resp.StatusCode, resp.Header.Get("Location"))
	}

	alice := r.browser("")
	if code, page := alice.get("/signin/oidc"); code != 200 || !strings.Contains(page, "<h1>Runs</h1>") {
		t.Fatalf("signing in ended at %d:\n%s", code, page)
	}
	if code, body := alice.post("/chat/name", url.Values{"name": {"bob"}}); code != http.StatusForbidden || !strings.Contains(body, "picking a name is not offered") {
		t.Errorf("picking a name when signed in = %d %s", code, body)
	}
	_, page := alice.get("/chat")
	if !strings.Contains(page, `<code id="signed-in-as">alice (slack:U1) (signed in)</code>`) || strings.Contains(page, `action="/chat/name"`) {
		t.Errorf("the chat page of a signed-in person:\n%s", page)
	}
	alice.say("/workflow run gated")
	run := r.waitRun("gated", db.StatusPaused)
	if run.UserID != "slack:U1" {
		t.Errorf("the run was started by %q, want slack:U1", run.UserID)
	}

	// A script with the token reads the run page, but its approval is refused.
	for _, method := range []string{"GET", "POST"} {
		req, _ := http.NewRequest(method, r.srv.URL+"/runs/"+run.ID+map[string]string{"GET": "", "POST": "/approve"}[method], nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		resp, err := anon.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := map[string]int{"GET": 200, "POST": http.StatusForbidden}[method]; resp.StatusCode != want {
			t.Errorf("%s with the token only = %d, want %d", method, resp.StatusCode, want)
		}
	}
	r.idle()
	if got, _ := r.store.GetRun(context.Background(), run.ID); got.Status != db.StatusPaused {
		t.Fatalf("run is %s after the token-only approval; want paused", got.Status)
	}

	alice.post("/runs/"+run.ID+"/approve", nil)
	r.waitRun("gated", db.StatusCompleted)
	entries, err := audit.Read(context.Background(), r.store, run.CreatedAt.Add(-1), 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Action+" "+e.By+" "+e.Verified)
	}
	if want := "approved slack:U1 signed-in|started slack:U1 signed-in"; strings.Join(got, "|") != want {
		t.Errorf("audit = %q, want %q", strings.Join(got, "|"), want)
	}
}
