package discordfake

import (
	"net/http"
	"strings"

	"threadflow/adapters/web/signin/signinfake"
)

// Signing in with Discord (OAuth2, scope identify) on loopback: /oauth2/authorize signs in the
// person SignInAs chose, /api/oauth2/token exchanges the code (client
// signinfake.ClientID/ClientSecret), and /api/users/@me answers the access token's user, as
// Discord does for a Bearer token.

// SignInAs makes the fake's authorization page sign in the Discord user id with a global name.
func (s *Server) SignInAs(userID, name string) {
	s.signin.SignInAs(signinfake.Person{ID: userID, Name: name})
}

func (s *Server) routeSignIn(mux *http.ServeMux) {
	mux.HandleFunc("GET /oauth2/authorize", s.signin.Authorize)
	mux.HandleFunc("POST /api/oauth2/token", s.serveOAuthToken)
	mux.HandleFunc("GET /api/users/@me", s.serveOAuthMe)
}

func (s *Server) serveOAuthToken(w http.ResponseWriter, r *http.Request) {
	_, tok, err := s.signin.Exchange(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 604800, "scope": "identify"})
}

func (s *Server) serveOAuthMe(w http.ResponseWriter, r *http.Request) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	p, known := s.signin.Token(tok)
	if !ok || !known {
		writeJSON(w, http.StatusUnauthorized, apiError("401: Unauthorized"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": p.ID, "username": strings.ToLower(p.Name), "global_name": p.Name})
}
