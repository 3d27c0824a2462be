package slackfake

import (
	"net/http"
	"strings"

	"threadflow/adapters/web/signin/signinfake"
)

// "Sign in with Slack" (OpenID Connect) on loopback: the authorization page signs in the person
// SignInAs chose, openid.connect.token answers with an ID token carrying the Slack user id in
// https://slack.com/user_id, signed with the key /openid/connect/keys publishes. The issuer is the
// fake's origin (Slack's is https://slack.com), the client signinfake.ClientID/ClientSecret.

// SignInAs makes the fake's sign-in page sign in the Slack user id (U…) with a display name.
func (s *Server) SignInAs(userID, name string) {
	s.signin.SignInAs(signinfake.Person{ID: userID, Name: name})
}

// Origin is the fake's base URL without /api/: where "Sign in with Slack" lives.
func (s *Server) Origin() string { return strings.TrimSuffix(s.URL(), "/api/") }

func (s *Server) routeSignIn(mux *http.ServeMux) {
	mux.HandleFunc("GET /openid/connect/authorize", s.signin.Authorize)
	mux.HandleFunc("GET /openid/connect/keys", s.signin.JWKS)
	mux.HandleFunc("POST /api/openid.connect.token", s.serveOIDCToken)
}

func (s *Server) serveOIDCToken(w http.ResponseWriter, r *http.Request) {
	g, tok, err := s.signin.Exchange(r)
	if err != nil {
		reply(w, apiResult{"error": err.Error()})
		return
	}
	id, err := s.signin.IDToken(s.Origin(), g, map[string]any{"https://slack.com/user_id": g.Person.ID, "https://slack.com/team_id": "TFAKE"})
	if err != nil {
		reply(w, apiResult{"error": "internal_error"})
		return
	}
	reply(w, apiResult{"ok": true, "access_token": "xoxp-" + tok, "token_type": "Bearer", "id_token": id})
}
