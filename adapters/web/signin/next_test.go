package signin

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/oauth2-proxy/mockoidc"
)

func TestLocalPathAcceptsOnlyThisDashboardsPages(t *testing.T) {
	t.Parallel()
	for next, want := range map[string]bool{
		"/runs/abc123":                     true,
		"/runs/abc123?tab=history":         true,
		"/":                                true,
		"":                                 false,
		"runs/abc":                         false, // relative to where? only absolute paths
		"//evil.example/x":                 false, // scheme-relative: another host
		"/\\evil.example":                  false, // some browsers read \ as /
		"https://evil.example/":            false,
		"/signin/oidc":                     false, // would loop
		"/signin":                          false,
		"/runs/\nSet-Cookie: x":            false,
		"/" + strings.Repeat("a", maxNext): false,
	} {
		if _, got := LocalPath(next); got != want {
			t.Errorf("LocalPath(%q) = %v, want %v", next, got, want)
		}
	}
}

// Someone sent to sign in from a page lands on that page once signed in.
func TestSignInReturnsToThePageAskedFor(t *testing.T) {
	r := newRig(t)
	r.op.QueueUser(&mockoidc.MockUser{Subject: "U1", PreferredUsername: "alice"})
	r.svcMuxPage(t, "/runs/{id}")
	// The dashboard's guard sends an anonymous browser here (AskedFor); its links carry the page.
	code, body := r.get(t, r.srv.URL+AskedFor("/runs/abc123?tab=history"))
	if code != http.StatusOK || !strings.Contains(body, `href="/signin/oidc?next=%2fruns%2fabc123%3ftab%3dhistory"`) {
		t.Fatalf("sign-in page %d does not carry the page asked for:\n%s", code, body)
	}
	code, body = r.get(t, r.srv.URL+"/signin/oidc?next="+url.QueryEscape("/runs/abc123?tab=history"))
	if code != http.StatusOK || body != "page /runs/abc123 for slack:U1" {
		t.Fatalf("after signing in: %d %q, want the page asked for", code, body)
	}
	// A foreign page is not followed: sign-in lands on "/".
	r.op.QueueUser(&mockoidc.MockUser{Subject: "U2", PreferredUsername: "bob"})
	code, body = r.get(t, r.srv.URL+"/signin/oidc?next="+url.QueryEscape("//evil.example/"))
	if code != http.StatusOK || body != "signed in as slack:U2" {
		t.Fatalf("after signing in with a foreign next: %d %q, want the dashboard's /", code, body)
	}
}

// svcMuxPage serves pattern on the rig's server, saying which page and who.
func (r *rig) svcMuxPage(t *testing.T, pattern string) {
	t.Helper()
	r.mux.HandleFunc("GET "+pattern, func(w http.ResponseWriter, req *http.Request) {
		id, _ := r.svc.Identity(req)
		io.WriteString(w, "page "+req.URL.Path+" for "+id.UserID)
	})
}
