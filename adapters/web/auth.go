package web

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// tokenCookie carries DASHBOARD_TOKEN for browsers after they opened a ?token= link once.
const tokenCookie = "threadflow_token"

// unauthorized is what a request without the token reads.
const unauthorized = "401 Unauthorized: this dashboard needs DASHBOARD_TOKEN. Send the header \"Authorization: Bearer <token>\", or open /?token=<token> once in a browser.\n"

// RequireToken lets a request through when it carries token: as "Authorization: Bearer <token>",
// as the cookie set by a previous ?token= link, or as ?token= itself, which sets that cookie
// (HttpOnly, SameSite=Strict) and redirects to the same URL without the token so it does not stay in
// the address bar or the history. Anything else gets 401. An empty token lets everything through:
// the bot refuses to start without one unless it listens on loopback only.
func RequireToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := sha256.Sum256([]byte(token))
	matches := func(got string) bool {
		h := sha256.Sum256([]byte(got)) // equal-length digests: the comparison leaks neither length nor prefix
		return got != "" && subtle.ConstantTimeCompare(h[:], want[:]) == 1
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if q := r.URL.Query(); q.Has("token") && r.Method == http.MethodGet && matches(q.Get("token")) {
			http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: token, Path: "/", HttpOnly: true,
				Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
			q.Del("token")
			u := *r.URL
			u.RawQuery = q.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
		if matches(bearer(r)) || matches(cookie(r)) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="threadflow"`)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(unauthorized)) // the client went away; nothing to do
	})
}

func bearer(r *http.Request) string {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

func cookie(r *http.Request) string {
	c, err := r.Cookie(tokenCookie)
	if err != nil {
		return ""
	}
	return c.Value
}
