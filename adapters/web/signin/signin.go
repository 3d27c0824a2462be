// Package signin signs people in to the dashboard with an OpenID Connect or OAuth2 provider
// ("Sign in with Slack", Discord, any OIDC issuer) and keeps who they are in a signed session
// cookie. A session names the person by their platform-qualified user id ("slack:U123"), so the
// dashboard acts as that person and every gate and access rule that names them holds there.
//
// The login flow keeps its state, nonce and PKCE verifier in a second signed cookie that lives
// ten minutes and is bound to the provider it was started for; the callback refuses a state that
// does not match, an ID token whose nonce does not match, and anything expired.
package signin

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// Cookie names. The session cookie is sent with every dashboard request; the flow cookie only to
// the sign-in paths.
const (
	SessionCookie = "threadflow_session"
	flowCookie    = "threadflow_signin"
)

// Paths the Service serves.
const (
	PathPrefix = "/signin"
	signOut    = "/signout"
)

// flowLifetime bounds the time between leaving for the provider and coming back.
const flowLifetime = 10 * time.Minute

// DefaultLifetime is how long a session lasts when Config.Lifetime is zero.
const DefaultLifetime = 12 * time.Hour

// Identity is who a session is: a platform-qualified user id and a display name.
type Identity struct {
	UserID   string    `json:"u"`
	Name     string    `json:"n,omitempty"`
	Provider string    `json:"p"`
	Expires  time.Time `json:"exp"`
}

func (i *Identity) expiry() time.Time { return i.Expires }

// flow is the state of one sign-in between the redirect to the provider and its callback.
type flow struct {
	Provider string    `json:"p"`
	State    string    `json:"s"`
	Nonce    string    `json:"n"`
	Verifier string    `json:"v,omitempty"` // PKCE, when the provider supports it
	Next     string    `json:"x,omitempty"` // the local page to land on after signing in (LocalPath)
	Expires  time.Time `json:"exp"`
}

func (f *flow) expiry() time.Time { return f.Expires }

// Provider is one way to sign in.
type Provider struct {
	Name  string // in the paths: /signin/NAME, /signin/NAME/callback
	Label string // on the sign-in page: "Sign in with Slack"
	OAuth oauth2.Config
	PKCE  bool
	// identify turns the provider's answer into a platform-qualified user id and a name. nonce is
	// the one the flow sent; an OIDC provider checks it against the ID token's.
	identify func(ctx context.Context, tok *oauth2.Token, nonce string) (id, name string, err error)
}

// Config configures a Service.
type Config struct {
	BaseURL   string // DASHBOARD_URL: where the provider sends people back
	Secret    []byte // SESSION_SECRET: signs the cookies
	Lifetime  time.Duration
	Providers []*Provider
	Now       func() time.Time
	Client    *http.Client // for the provider's token and user endpoints; nil means http.DefaultClient
}

// Service serves sign-in and reads sessions.
type Service struct {
	cfg    Config
	seal   sealer
	secure bool
	byName map[string]*Provider
}

// MinSecret is the shortest SESSION_SECRET accepted, in bytes.
const MinSecret = 32

// New builds a Service; it fails on a configuration a person must fix, naming it.
func New(c Config) (*Service, error) {
	base, err := url.Parse(c.BaseURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("DASHBOARD_URL %q is not an http:// or https:// URL", c.BaseURL)
	}
	if len(c.Secret) < MinSecret {
		return nil, fmt.Errorf("SESSION_SECRET must be at least %d characters (openssl rand -hex 32)", MinSecret)
	}
	if len(c.Providers) == 0 {
		return nil, errors.New("signin: no provider configured")
	}
	if c.Lifetime <= 0 {
		c.Lifetime = DefaultLifetime
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	c.BaseURL = strings.TrimSuffix(c.BaseURL, "/")
	s := &Service{cfg: c, seal: sealer{key: c.Secret}, secure: base.Scheme == "https", byName: map[string]*Provider{}}
	for _, p := range c.Providers {
		p.OAuth.RedirectURL = c.BaseURL + PathPrefix + "/" + p.Name + "/callback"
		s.byName[p.Name] = p
	}
	return s, nil
}

// Providers are the ways to sign in, in the order the sign-in page lists them.
func (s *Service) Providers() []*Provider { return s.cfg.Providers }

// Register adds the sign-in paths to mux. They need no session and no token: they are how one gets
// a session.
func (s *Service) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET "+PathPrefix+"/{$}", s.page)
	mux.HandleFunc("GET "+PathPrefix+"/{provider}", s.start)
	mux.HandleFunc("GET "+PathPrefix+"/{provider}/callback", s.callback)
	mux.HandleFunc("POST "+signOut, s.signOut)
}

// Open reports whether a request's path is one of the sign-in paths, which answer without a
// session or a token.
func Open(path string) bool {
	return path == PathPrefix || strings.HasPrefix(path, PathPrefix+"/") || path == signOut
}

// Identity reads the request's session; ok is false without a valid, unexpired one.
func (s *Service) Identity(r *http.Request) (Identity, bool) {
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return Identity{}, false
	}
	var id Identity
	if s.seal.open("session", c.Value, s.cfg.Now(), &id) != nil || id.UserID == "" {
		return Identity{}, false
	}
	return id, true
}

var pageTemplate = template.Must(template.New("signin").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in · Threadflow</title>
<link rel="stylesheet" href="/static/style.css"></head>
<body><main class="signin"><h1>Sign in to Threadflow</h1>
{{if .Problem}}<p class="problem" id="signin-problem">{{.Problem}}</p>{{end}}
<ul>{{range .Providers}}<li><a class="button" id="signin-{{.Name}}" href="/signin/{{.Name}}{{with $.Next}}?next={{.}}{{end}}">{{.Label}}</a></li>{{end}}</ul>
<p>The dashboard acts as the person you sign in as: your gates and runs, under your own id.</p>
</main></body></html>`))

func (s *Service) page(w http.ResponseWriter, r *http.Request) {
	next, _ := LocalPath(r.URL.Query().Get(NextParam))
	s.renderPageNext(w, http.StatusOK, "", next)
}

func (s *Service) renderPage(w http.ResponseWriter, status int, problem string) {
	s.renderPageNext(w, status, problem, "")
}

// renderPageNext renders the sign-in page, its links carrying next (a LocalPath, or "").
func (s *Service) renderPageNext(w http.ResponseWriter, status int, problem, next string) {
	// Rendered first, so a template that fails is a 500 that says so, not half a page.
	var page bytes.Buffer
	if err := pageTemplate.Execute(&page, struct {
		Problem   string
		Providers []*Provider
		Next      string
	}{problem, s.cfg.Providers, next}); err != nil {
		http.Error(w, "the sign-in page could not be rendered: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
	w.WriteHeader(status)
	w.Write(page.Bytes()) // the client went away if this fails; nothing to do
}

// start sends the browser to the provider, remembering state, nonce and PKCE verifier.
func (s *Service) start(w http.ResponseWriter, r *http.Request) {
	p, ok := s.byName[r.PathValue("provider")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	f := flow{Provider: p.Name, State: random(), Nonce: random(), Expires: s.cfg.Now().Add(flowLifetime)}
	f.Next, _ = LocalPath(r.URL.Query().Get(NextParam))
	opts := []oauth2.AuthCodeOption{oauth2.SetAuthURLParam("nonce", f.Nonce)}
	if p.PKCE {
		f.Verifier = oauth2.GenerateVerifier()
		opts = append(opts, oauth2.S256ChallengeOption(f.Verifier))
	}
	v, err := s.seal.seal("flow", &f)
	if err != nil {
		http.Error(w, "Could not start signing in.", http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, s.cookie(flowCookie, v, PathPrefix, flowLifetime))
	http.Redirect(w, r, p.OAuth.AuthCodeURL(f.State, opts...), http.StatusFound)
}

// callback finishes a sign-in: the state must be the flow's, the provider must vouch for the code
// (with the PKCE verifier) and the ID token's nonce must be the flow's.
func (s *Service) callback(w http.ResponseWriter, r *http.Request) {
	p, ok := s.byName[r.PathValue("provider")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	http.SetCookie(w, s.cookie(flowCookie, "", PathPrefix, -1)) // one use
	f, err := s.readFlow(r, p)
	if err != nil {
		s.renderPage(w, http.StatusBadRequest, err.Error())
		return
	}
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		s.renderPage(w, http.StatusUnauthorized, p.Label+" did not sign you in ("+e+"). Try again.")
		return
	}
	ctx := r.Context()
	if s.cfg.Client != nil {
		ctx = context.WithValue(ctx, oauth2.HTTPClient, s.cfg.Client)
	}
	var opts []oauth2.AuthCodeOption
	if f.Verifier != "" {
		opts = append(opts, oauth2.VerifierOption(f.Verifier))
	}
	tok, err := p.OAuth.Exchange(ctx, q.Get("code"), opts...)
	if err != nil {
		s.renderPage(w, http.StatusBadGateway, p.Label+" did not accept the sign-in code. Try again.")
		return
	}
	uid, name, err := p.identify(ctx, tok, f.Nonce)
	if err != nil {
		s.renderPage(w, http.StatusUnauthorized, "Signing in failed: "+err.Error()+".")
		return
	}
	id := Identity{UserID: uid, Name: name, Provider: p.Name, Expires: s.cfg.Now().Add(s.cfg.Lifetime)}
	v, err := s.seal.seal("session", &id)
	if err != nil {
		http.Error(w, "Could not start the session.", http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, s.cookie(SessionCookie, v, "/", s.cfg.Lifetime))
	next, ok := LocalPath(f.Next) // checked again: the flow cookie is sealed, but the rule is this one
	if !ok {
		next = "/"
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// readFlow reads the flow cookie and checks it against the callback's provider and state.
func (s *Service) readFlow(r *http.Request, p *Provider) (flow, error) {
	const again = "This sign-in expired or was not started in this browser; start again."
	c, err := r.Cookie(flowCookie)
	if err != nil {
		return flow{}, errors.New(again)
	}
	var f flow
	if s.seal.open("flow", c.Value, s.cfg.Now(), &f) != nil || f.Provider != p.Name {
		return flow{}, errors.New(again)
	}
	if st := r.URL.Query().Get("state"); st == "" || st != f.State {
		return flow{}, errors.New("The sign-in answer does not belong to this browser's sign-in (state mismatch); start again.")
	}
	return f, nil
}

func (s *Service) signOut(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, s.cookie(SessionCookie, "", "/", -1))
	http.Redirect(w, r, PathPrefix+"/", http.StatusSeeOther)
}

// cookie is one of the Service's cookies: HttpOnly, SameSite=Lax (the provider's redirect back is
// a top-level navigation from another site, which Lax lets through and Strict would not), Secure
// when DASHBOARD_URL is https. A negative age deletes it.
func (s *Service) cookie(name, value, path string, age time.Duration) *http.Cookie {
	c := &http.Cookie{Name: name, Value: value, Path: path, HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode}
	if age < 0 {
		c.MaxAge = -1
	} else {
		c.MaxAge = int(age.Seconds())
		c.Expires = s.cfg.Now().Add(age)
	}
	return c
}

// random is 32 bytes from crypto/rand, for states and nonces.
func random() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return base64.RawURLEncoding.EncodeToString(b)
}
