package main

import (
	"net/http"
	"strings"
	"testing"
	"threadflow/testkit"
	"time"
)

func TestProcessRefusesOpenDashboardWithoutToken(t *testing.T) {
	p := launchIn(t, t.TempDir(), "HTTP_ADDR=0.0.0.0:0")
	if code := p.Exit(); code != 2 {
		t.Errorf("exit status %d, want 2", code)
	}
	want := "threadflow: DASHBOARD_TOKEN is required when HTTP_ADDR (0.0.0.0:0) is not a loopback address: the dashboard can approve and abandon runs; set DASHBOARD_TOKEN to a long random string, or listen on 127.0.0.1\n"
	if got := p.Stderr(); got != want {
		t.Errorf("stderr = %q, want exactly the one line %q", got, want)
	}
}

func TestLoopback(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:8080", true},
		{"127.0.0.2:8080", true},
		{"[::1]:8080", true},
		{"localhost:8080", true},
		{"0.0.0.0:8080", false},
		{":8080", false},
		{"[::]:8080", false},
		{"10.1.2.3:8080", false},
		{"bot.example.com:8080", false},
	}
	for _, tt := range tests {
		if got := loopback(tt.addr); got != tt.want {
			t.Errorf("loopback(%q) = %v, want %v", tt.addr, got, tt.want)
		}
	}
}

func TestLoadConfigDashboardToken(t *testing.T) {
	if _, err := loadConfig("serve", nil, envOf(map[string]string{"HTTP_ADDR": "0.0.0.0:8080", "DASHBOARD_TOKEN": "t"}), testHost); err != nil {
		t.Errorf("a token makes a public HTTP_ADDR acceptable; got %v", err)
	}
	_, err := loadConfig("serve", nil, envOf(map[string]string{"HTTP_ADDR": ":8080"}), testHost)
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "DASHBOARD_TOKEN is required") {
		t.Errorf("every interface without a token: %v (exit %d), want a usage error naming DASHBOARD_TOKEN", err, exitCode(err))
	}
}

func TestServeDashboardRequiresToken(t *testing.T) {
	const token = "s3cret-dashboard-token"
	b := runBot(t, map[string]string{"THREADFLOW_HOME": t.TempDir(), "HTTP_ADDR": "127.0.0.1:0", "DASHBOARD_TOKEN": token})
	base := waitURL(t, b.stdout, b.done, b.stderr)
	waitLine(t, b, "Web chat on: "+base+"chat")
	noRedirect := &http.Client{Timeout: testkit.Deadline, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	tests := []struct {
		name   string
		path   string
		header string // Authorization
		cookie string
		want   int
	}{
		{"dashboard without token", "", "", "", 401},
		{"chat without token", "chat", "", "", 401},
		{"metrics without token", "metrics", "", "", 401},
		{"wrong bearer", "", "Bearer nope", "", 401},
		{"bearer", "", "Bearer " + token, "", 200},
		{"metrics with bearer", "metrics", "Bearer " + token, "", 200},
		{"cookie", "chat", "", token, 200},
		{"health stays open", "healthz", "", "", 200},
		{"readiness stays open", "readyz", "", "", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", base+tt.path, nil)
			if tt.header != "" {
				req.Header.Set("Authorization", tt.header)
			}
			if tt.cookie != "" {
				req.AddCookie(&http.Cookie{Name: "threadflow_token", Value: tt.cookie})
			}
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("GET /%s = %d, want %d", tt.path, resp.StatusCode, tt.want)
			}
		})
	}
	t.Run("token link sets an HttpOnly cookie and drops the token from the URL", func(t *testing.T) {
		resp, err := noRedirect.Get(base + "chat?token=" + token)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/chat" {
			t.Errorf("?token= answered %d to %q, want 303 to /chat", resp.StatusCode, resp.Header.Get("Location"))
		}
		c := resp.Cookies()
		if len(c) != 1 || c[0].Value != token || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode {
			t.Errorf("cookies = %+v, want one HttpOnly SameSite=Strict cookie carrying the token", c)
		}
	})
}

// waitLine waits for a line of the bot's stdout that contains want.
func waitLine(t *testing.T, b *inProcessBot, want string) {
	t.Helper()
	deadline := time.After(testkit.Deadline)
	for {
		select {
		case line := <-b.stdout.lines:
			if strings.Contains(line, want) {
				return
			}
		case <-deadline:
			t.Fatalf("no stdout line contains %q; stdout:\n%s", want, b.stdout)
		}
	}
}
