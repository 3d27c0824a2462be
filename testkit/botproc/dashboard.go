package botproc

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"threadflow/testkit"
)

// ApproveOnDashboard presses Approve, with a note, on the page of run id of the dashboard at base
// (a running bot's URL, ending in "/"), as the web user name: the form's POST, from the same
// origin, answered by a redirect back to the page.
func ApproveOnDashboard(t testing.TB, base, id, name, note string) {
	t.Helper()
	req, err := http.NewRequest("POST", base+"runs/"+id+"/approve", strings.NewReader(url.Values{"note": {note}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.AddCookie(&http.Cookie{Name: "threadflow_user", Value: name})
	c := http.Client{Timeout: testkit.Deadline, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve on the dashboard answered %d", resp.StatusCode)
	}
}
