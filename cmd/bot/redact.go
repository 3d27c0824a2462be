package main

import (
	"net/url"
	"strings"
)

// redacted replaces secrets wherever they would be shown.
const redacted = "xxxxx"

// redactURL returns a database URL safe to show: the password, in the user info or in a password
// query parameter, is replaced. Text that does not parse as a URL may be a keyword/value
// connection string holding a password, so it is not shown at all.
func redactURL(v string) string {
	u, err := url.Parse(v)
	if err != nil || u.Scheme == "" {
		return "(unparsable, hidden)"
	}
	q := u.Query()
	for k := range q {
		if strings.Contains(strings.ToLower(k), "password") {
			q.Set(k, redacted)
		}
	}
	u.RawQuery = q.Encode()
	return u.Redacted()
}

// urlPassword is the password in a database URL, or "".
func urlPassword(v string) string {
	u, err := url.Parse(v)
	if err != nil || u.User == nil {
		return ""
	}
	p, _ := u.User.Password()
	return p
}

// scrub replaces every non-empty secret in s: a last line of defence for text from other packages
// (driver errors) on its way to a log, the terminal or an HTTP response.
func scrub(s string, secrets []string) string {
	for _, v := range secrets {
		if v != "" {
			s = strings.ReplaceAll(s, v, redacted)
		}
	}
	return s
}
