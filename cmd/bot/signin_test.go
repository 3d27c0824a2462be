package main

import (
	"strings"
	"testing"
)

// Sign-in settings are validated at start, each refusal naming the setting to fix.
func TestLoadConfigSignInNamesTheSetting(t *testing.T) {
	secret := strings.Repeat("k", 32)
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"SLACK_CLIENT_ID": "1.2"}, "SLACK_CLIENT_SECRET"},
		{map[string]string{"DISCORD_CLIENT_SECRET": "s"}, "DISCORD_CLIENT_ID"},
		{map[string]string{"OIDC_ISSUER": "https://id.example", "OIDC_CLIENT_SECRET": "s"}, "OIDC_CLIENT_ID"},
		{map[string]string{"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "s", "SESSION_SECRET": secret}, "DASHBOARD_URL"},
		{map[string]string{"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "s", "DASHBOARD_URL": "https://dash.example", "SESSION_SECRET": "short"}, "SESSION_SECRET"},
		{map[string]string{"DASHBOARD_URL": "dash.example"}, "DASHBOARD_URL"},
		{map[string]string{"OIDC_ID_PLATFORM": "web"}, "OIDC_ID_PLATFORM"},
		{map[string]string{"OIDC_ISSUER": "https://id.example", "OIDC_CLIENT_ID": "c", "OIDC_CLIENT_SECRET": "s"}, "OIDC_ID_PLATFORM"},
	} {
		_, err := loadConfig("serve", nil, envOf(c.env), testHost)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want an error naming %s", c.env, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("%v: the error quotes SESSION_SECRET: %v", c.env, err)
		}
	}
	ok := map[string]string{"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "s", "DASHBOARD_URL": "https://dash.example", "SESSION_SECRET": secret}
	c, err := loadConfig("serve", nil, envOf(ok), testHost)
	if err != nil || !c.SignIn.Enabled() {
		t.Fatalf("a complete Slack sign-in: %v (enabled %v)", err, c.SignIn.Enabled())
	}
}
