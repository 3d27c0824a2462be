package web

import (
	"net/http"
	"strings"

	"threadflow/adapters/web/signin"
	"threadflow/conversation"
)

// viewer is who a request acts as on the dashboard and the chat page. With sign-in configured
// (Config.SignIn) it is the signed-in person, by their platform id ("slack:U123"), and nobody
// without a session: picking a name is not offered. Without it, it is the self-declared web name
// of the browser's cookie ("web:alice"), which nothing verifies.
type viewer struct {
	ID       string // the user id the bot sees; "" for nobody (sign-in configured, no session)
	Name     string // display name
	SignedIn bool
	Chat     conversation.Address // the person's own conversation on the chat page
}

// Label is how pages name the viewer: the id, and whether anything vouches for it.
func (v viewer) Label() string {
	switch {
	case v.SignedIn:
		return person(v.ID, v.Name) + " (signed in)"
	case v.ID == "":
		return "nobody (not signed in)"
	}
	return v.ID + " (unverified)"
}

// via is how the bot knows who the viewer is, recorded with what they do (conversation.Message.Via).
func (v viewer) via() string {
	if v.SignedIn {
		return conversation.ViaSignIn
	}
	return ""
}

// signedInChannel is the chat page's conversation of a signed-in person. '~' is outside
// namePattern and ':' is not allowed in a channel, so it never meets a typed name's conversation.
func signedInChannel(id string) string { return "~" + strings.ReplaceAll(id, ":", ".") }

func (s *Server) viewer(r *http.Request) viewer {
	if s.cfg.SignIn == nil {
		name := userName(r)
		return viewer{ID: userID(name), Name: name, Chat: chatAddress(name)}
	}
	id, ok := s.cfg.SignIn.Identity(r)
	if !ok {
		return viewer{Chat: chatAddress(signedInChannel("nobody"))}
	}
	return viewer{ID: id.UserID, Name: id.Name, SignedIn: true, Chat: chatAddress(signedInChannel(id.UserID))}
}

// mayAct answers the request itself and returns false when its viewer may not send the bot
// anything: with sign-in configured, only a signed-in person acts (DASHBOARD_TOKEN alone reads).
func (s *Server) mayAct(w http.ResponseWriter, v viewer) bool {
	if v.ID != "" {
		return true
	}
	http.Error(w, "Sign in first (/signin): the dashboard acts only as the person signed in.", http.StatusForbidden)
	return false
}

// guard lets a request through with a session or DASHBOARD_TOKEN; the sign-in paths are open, as
// they are how one gets a session. Without either, a browser's page view is sent to sign in and
// anything else is refused.
func (s *Server) guard(next http.Handler) http.Handler {
	tokened := RequireToken(s.cfg.Token, next)
	if s.cfg.SignIn == nil {
		return tokened
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, signedIn := s.cfg.SignIn.Identity(r)
		tokenTried := bearer(r) != "" || cookie(r) != "" || r.URL.Query().Has("token")
		switch {
		case signedIn || signin.Open(r.URL.Path) || strings.HasPrefix(r.URL.Path, "/static/"):
			next.ServeHTTP(w, r)
		case s.cfg.Token != "" && tokenTried:
			tokened.ServeHTTP(w, r) // a machine: it reads, and acts as nobody
		case r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/live/"):
			http.Redirect(w, r, signin.AskedFor(r.URL.RequestURI()), http.StatusSeeOther)
		default:
			http.Error(w, "Sign in first (/signin).", http.StatusUnauthorized)
		}
	})
}
