// Package signinfake is the OAuth2 authorization-code server the Slack and Discord fakes
// (slackfake, discordfake) serve their sign-in endpoints with: an authorization page that signs in
// the person a test chose at once, a code exchanged once for an access token by the registered
// client, and ID tokens signed with a key published as a JWKS, so a real OIDC client verifies them.
package signinfake

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// The client the fakes accept: set SLACK_CLIENT_ID/SECRET or DISCORD_CLIENT_ID/SECRET to these.
const (
	ClientID     = "signinfake-client"
	ClientSecret = "signinfake-secret"
)

const keyID = "signinfake-1"

// Person is who the authorization page signs in.
type Person struct {
	ID   string // the platform's own id: U123 on Slack, a snowflake on Discord
	Name string
}

// Grant is what a code was issued for.
type Grant struct {
	Person   Person
	Nonce    string
	redirect string
}

// Server is the authorization server's state.
type Server struct {
	mu     sync.Mutex
	person *Person
	codes  map[string]Grant
	tokens map[string]Person
	key    *rsa.PrivateKey
}

// New makes a Server; nobody is signed in until SignInAs.
func New() *Server {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic("signinfake: " + err.Error()) // crypto/rand does not fail
	}
	return &Server{codes: map[string]Grant{}, tokens: map[string]Person{}, key: key}
}

// SignInAs makes the authorization page sign in p.
func (s *Server) SignInAs(p Person) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.person = &p
}

// Authorize is the authorization page: it sends the browser back to redirect_uri with a code for
// the chosen person and the state, or with error=access_denied when nobody was chosen.
func (s *Server) Authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	back, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || back.Scheme == "" || q.Get("client_id") != ClientID || q.Get("response_type") != "code" {
		http.Error(w, "invalid authorization request", http.StatusBadRequest)
		return
	}
	v := back.Query()
	v.Set("state", q.Get("state"))
	s.mu.Lock()
	if s.person == nil {
		v.Set("error", "access_denied")
	} else {
		code := random()
		s.codes[code] = Grant{Person: *s.person, Nonce: q.Get("nonce"), redirect: back.String()}
		v.Set("code", code)
	}
	s.mu.Unlock()
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// Exchange reads a token request: the registered client (in the form or as basic auth), a code
// issued to it, used once, and the redirect_uri it was issued for. It returns the grant and a new
// access token for it.
func (s *Server) Exchange(r *http.Request) (Grant, string, error) {
	if err := r.ParseForm(); err != nil {
		return Grant{}, "", err
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != ClientID || secret != ClientSecret {
		return Grant{}, "", errors.New("invalid_client")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.codes[r.PostForm.Get("code")]
	delete(s.codes, r.PostForm.Get("code"))
	if !ok || g.redirect != r.PostForm.Get("redirect_uri") {
		return Grant{}, "", errors.New("invalid_grant")
	}
	tok := random()
	s.tokens[tok] = g.Person
	return g, tok, nil
}

// Token is the person an access token was issued for.
func (s *Server) Token(accessToken string) (Person, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.tokens[accessToken]
	return p, ok
}

// IDToken is a signed ID token for the grant, issued by issuer to the fake's client, with extra
// claims.
func (s *Server) IDToken(issuer string, g Grant, extra map[string]any) (string, error) {
	now := time.Now()
	claims := map[string]any{"iss": issuer, "aud": ClientID, "sub": g.Person.ID, "iat": now.Unix(),
		"exp": now.Add(time.Hour).Unix(), "name": g.Person.Name}
	if g.Nonce != "" {
		claims["nonce"] = g.Nonce
	}
	for k, v := range extra {
		claims[k] = v
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: s.key, KeyID: keyID}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	obj, err := signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return obj.CompactSerialize()
}

// JWKS serves the public key ID tokens are signed with.
func (s *Server) JWKS(w http.ResponseWriter, _ *http.Request) {
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &s.key.PublicKey, KeyID: keyID, Algorithm: string(jose.RS256), Use: "sig"}}}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(set) // the client went away; nothing to do
}

func random() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}
