package signin

import (
	"net/url"
	"strings"
)

// NextParam is the query parameter that carries the page a person asked for through sign-in:
// the dashboard sends someone not signed in to /signin/?next=PAGE, and after signing in they land
// on PAGE.
const NextParam = "next"

// maxNext bounds the page remembered through sign-in.
const maxNext = 2048

// LocalPath reports whether next is a page of this dashboard to return to after signing in: a
// same-origin relative path ("/runs/ID?x=y"), never an absolute URL, a scheme-relative "//host",
// a backslash some browsers read as a slash, a control character, or a sign-in page (which would
// loop). Anything else lands on "/": sign-in is no open redirect.
func LocalPath(next string) (string, bool) {
	if next == "" || len(next) > maxNext || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") ||
		strings.ContainsAny(next, "\\") || strings.IndexFunc(next, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0 {
		return "", false
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || Open(u.Path) {
		return "", false
	}
	return next, true
}

// AskedFor is the page to send someone not signed in to: the sign-in page, remembering r's page
// when it is a local one worth returning to.
func AskedFor(requestURI string) string {
	if next, ok := LocalPath(requestURI); ok && next != "/" {
		return PathPrefix + "/?" + url.Values{NextParam: {next}}.Encode()
	}
	return PathPrefix + "/"
}
