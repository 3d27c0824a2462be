package signin

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

	"threadflow/adapters/discord/discordfake"
	"threadflow/adapters/slack/slackfake"
	"threadflow/adapters/web/signin/signinfake"
)

var secret = []byte(strings.Repeat("s", MinSecret))

// rig is a Service signing in through a real OIDC provider on loopback, behind a test server
// whose "/" prints who the session is.
type rig struct {
	svc  *Service
	op   *mockoidc.MockOIDC
	srv  *httptest.Server
	mux  *http.ServeMux
	http *http.Client
	now  time.Time
}

func newRig(t *testing.T) *rig {
	t.Helper()
	op, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Shutdown() })
	r := &rig{op: op, now: time.Now()}
	mux := http.NewServeMux()
	r.srv, r.mux = httptest.NewServer(mux), mux
	t.Cleanup(r.srv.Close)
	c := op.Config()
	p, err := OIDC(context.Background(), c.Issuer, c.ClientID, c.ClientSecret, "sub", "slack")
	if err != nil {
		t.Fatal(err)
	}
	if !p.PKCE {
		t.Fatal("mockoidc offers S256, but the provider does not use PKCE")
	}
	r.svc, err = New(Config{BaseURL: r.srv.URL, Secret: secret, Lifetime: time.Hour, Providers: []*Provider{p},
		Now: func() time.Time { return r.now }})
	if err != nil {
		t.Fatal(err)
	}
	r.svc.Register(mux)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, req *http.Request) {
		if id, ok := r.svc.Identity(req); ok {
			io.WriteString(w, "signed in as "+id.UserID)
			return
		}
		io.WriteString(w, "anonymous")
	})
	jar, _ := cookiejar.New(nil)
	r.http = &http.Client{Jar: jar}
	return r
}

func (r *rig) get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := r.http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestSignInThroughOIDCProvider(t *testing.T) {
	r := newRig(t)
	r.op.QueueUser(&mockoidc.MockUser{Subject: "U1", PreferredUsername: "alice"})
	code, body := r.get(t, r.srv.URL+"/signin/oidc")
	if code != http.StatusOK || body != "signed in as slack:U1" {
		t.Fatalf("after signing in: %d %q", code, body)
	}
	cookies := r.http.Jar.Cookies(mustURL(r.srv.URL))
	if len(cookies) != 1 || cookies[0].Name != SessionCookie {
		t.Fatalf("cookies after sign-in: %v (the flow cookie must be gone)", cookies)
	}
}

func TestSessionCookieAttributes(t *testing.T) {
	r := newRig(t)
	rec := httptest.NewRecorder()
	r.svc.start(rec, withPath(httptest.NewRequest("GET", "/signin/oidc", nil), "oidc"))
	c := rec.Result().Cookies()[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure || c.Path != "/signin" || c.MaxAge != int(flowLifetime.Seconds()) {
		t.Fatalf("flow cookie %+v", c)
	}
	s, err := New(Config{BaseURL: "https://dash.example", Secret: secret, Providers: r.svc.cfg.Providers})
	if err != nil {
		t.Fatal(err)
	}
	if c := s.cookie(SessionCookie, "v", "/", time.Hour); !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode {
		t.Fatalf("session cookie on an https dashboard: %+v", c)
	}
}

func TestSessionRefusesTamperedExpiredAndForeignCookies(t *testing.T) {
	r := newRig(t)
	good, _ := r.svc.seal.seal("session", &Identity{UserID: "slack:U1", Expires: r.now.Add(time.Hour)})
	read := func(v string) (Identity, bool) {
		req := httptest.NewRequest("GET", "/", nil)
		req.AddCookie(&http.Cookie{Name: SessionCookie, Value: v})
		return r.svc.Identity(req)
	}
	if id, ok := read(good); !ok || id.UserID != "slack:U1" {
		t.Fatalf("a good session reads %v %v", id, ok)
	}
	payload, sig, _ := strings.Cut(good, ".")
	forged, _ := sealer{key: []byte(strings.Repeat("x", MinSecret))}.seal("session", &Identity{UserID: "slack:UADMIN", Expires: r.now.Add(time.Hour)})
	asFlow, _ := r.svc.seal.seal("flow", &Identity{UserID: "slack:U1", Expires: r.now.Add(time.Hour)})
	expired, _ := r.svc.seal.seal("session", &Identity{UserID: "slack:U1", Expires: r.now})
	for name, v := range map[string]string{
		"payload changed": strings.ToUpper(payload[:1]) + payload[1:] + "." + sig + "x",
		"other key":       forged,
		"other purpose":   asFlow,
		"expired":         expired,
		"no signature":    payload,
	} {
		if id, ok := read(v); ok {
			t.Errorf("%s: accepted as %v", name, id)
		}
	}
	r.now = r.now.Add(2 * time.Hour)
	if _, ok := read(good); ok {
		t.Error("a session past its lifetime is accepted")
	}
}

// The callback refuses a state that is not the flow's, a flow cookie from another time, and an ID
// token whose nonce is not the flow's.
func TestCallbackChecksStateNonceAndExpiry(t *testing.T) {
	r := newRig(t)
	// Leave for the provider, and stop before coming back.
	r.http.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := r.http.Get(r.srv.URL + "/signin/oidc")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	auth := mustURL(resp.Header.Get("Location"))
	q := auth.Query()
	if q.Get("nonce") == "" || q.Get("state") == "" || q.Get("code_challenge_method") != "S256" {
		t.Fatalf("authorization request lacks nonce, state or PKCE: %s", auth)
	}
	// The provider answers; the browser is held before the callback.
	resp, err = r.http.Get(auth.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cb := mustURL(resp.Header.Get("Location"))
	r.http.CheckRedirect = nil
	var started flow
	for _, c := range r.http.Jar.Cookies(mustURL(r.srv.URL + "/signin/")) {
		if c.Name == flowCookie && r.svc.seal.open("flow", c.Value, r.now, &started) != nil {
			t.Fatal("the flow cookie does not open")
		}
	}

	wrongState := *cb
	v := cb.Query()
	v.Set("state", "someone-elses")
	wrongState.RawQuery = v.Encode()
	if code, body := r.get(t, wrongState.String()); code != http.StatusBadRequest || !strings.Contains(body, "state mismatch") {
		t.Fatalf("wrong state: %d %s", code, body)
	}
	// The failed callback used up the flow: coming back again is refused.
	if code, body := r.get(t, cb.String()); code != http.StatusBadRequest || !strings.Contains(body, "start again") {
		t.Fatalf("second callback: %d %s", code, body)
	}

	// A flow with the right state but another nonce: the ID token's nonce does not match.
	f := started
	f.Nonce = "another"
	r.setFlow(t, f)
	if code, body := r.get(t, cb.String()); code != http.StatusUnauthorized || !strings.Contains(body, "nonce") {
		t.Fatalf("wrong nonce: %d %s", code, body)
	}
	// An expired flow.
	f.Expires = r.now
	r.setFlow(t, f)
	if code, body := r.get(t, cb.String()); code != http.StatusBadRequest || !strings.Contains(body, "expired") {
		t.Fatalf("expired flow: %d %s", code, body)
	}
	if _, body := r.get(t, r.srv.URL+"/"); body != "anonymous" {
		t.Fatalf("after refused callbacks the browser is %q", body)
	}
}

func TestNewNamesTheSettingToFix(t *testing.T) {
	p := Discord("https://discord.com", "id", "secret")
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{BaseURL: "dash.example", Secret: secret, Providers: []*Provider{p}}, "DASHBOARD_URL"},
		{Config{BaseURL: "https://dash.example", Secret: []byte("short"), Providers: []*Provider{p}}, "SESSION_SECRET"},
	} {
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want an error naming %s", c.cfg, err, c.want)
		}
	}
}

func (r *rig) setFlow(t *testing.T, f flow) {
	t.Helper()
	v, err := r.svc.seal.seal("flow", &f)
	if err != nil {
		t.Fatal(err)
	}
	u := mustURL(r.srv.URL + "/signin/")
	r.http.Jar.SetCookies(u, []*http.Cookie{{Name: flowCookie, Value: v, Path: "/signin"}})
}

func withPath(req *http.Request, provider string) *http.Request {
	req.SetPathValue("provider", provider)
	return req
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

// signInWith signs a browser in through p, behind a test server whose "/" says who it is.
func signInWith(t *testing.T, p *Provider) string {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	svc, err := New(Config{BaseURL: srv.URL, Secret: secret, Providers: []*Provider{p}})
	if err != nil {
		t.Fatal(err)
	}
	svc.Register(mux)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, req *http.Request) {
		id, _ := svc.Identity(req)
		io.WriteString(w, id.UserID+" "+id.Name)
	})
	jar, _ := cookiejar.New(nil)
	resp, err := (&http.Client{Jar: jar}).Get(srv.URL + "/signin/" + p.Name)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// "Sign in with Slack" against the Slack fake's loopback OpenID Connect endpoints: the person is
// the ID token's https://slack.com/user_id.
func TestSignInWithSlack(t *testing.T) {
	fake := slackfake.New(t)
	fake.SignInAs("U1SLACK", "Alice")
	if got := signInWith(t, Slack(context.Background(), fake.Origin(), signinfake.ClientID, signinfake.ClientSecret)); got != "slack:U1SLACK Alice" {
		t.Fatalf("signed in with Slack as %q", got)
	}
	wrong := Slack(context.Background(), fake.Origin(), signinfake.ClientID, "not-the-secret")
	if got := signInWith(t, wrong); !strings.Contains(got, "did not accept the sign-in code") {
		t.Fatalf("with a wrong client secret: %q", got)
	}
}

// Discord OAuth2 (identify) against the Discord fake: the person is /users/@me's id.
func TestSignInWithDiscord(t *testing.T) {
	fake := discordfake.New(t)
	fake.SignInAs("80351110224678912", "Bob")
	if got := signInWith(t, Discord(fake.URL(), signinfake.ClientID, signinfake.ClientSecret)); got != "discord:80351110224678912 Bob" {
		t.Fatalf("signed in with Discord as %q", got)
	}
}
