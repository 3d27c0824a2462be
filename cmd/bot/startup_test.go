package main

import (
	"net"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"threadflow/adapters/discord/discordfake"
	"threadflow/adapters/slack/slackfake"
	"threadflow/db/dbtest"
)

// closedPort is a loopback address nothing listens on: connections to it are refused at once.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// A chat platform is announced only once it answered and took the token; one that does not stops
// the start with one line naming the platform once, what failed and what to check (issue 26). The
// announcements themselves are checked by the end-to-end tests (TestSlackRunHelloWorld,
// TestDiscordRunHelloWorld), with the real binary: discordgo may try to reconnect after its session
// is closed, which must not outlive a test in this process.
func TestChatPlatformsAreOnOnlyOnceTheyAcceptTheToken(t *testing.T) {
	slack := slackfake.New(t)
	unreachable := "http://" + closedPort(t)
	failures := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"Slack unreachable",
			map[string]string{"SLACK_BOT_TOKEN": slackfake.BotToken, "SLACK_APP_TOKEN": slackfake.AppToken, "SLACK_API_URL": unreachable + "/api/"},
			"threadflow: slack: cannot reach Slack to check SLACK_BOT_TOKEN (auth.test): Post \"" + unreachable + "/api/auth.test\": dial tcp " +
				strings.TrimPrefix(unreachable, "http://") + ": connect: connection refused; check the network, and SLACK_API_URL if set\n"},
		{"Slack refusing the token",
			map[string]string{"SLACK_BOT_TOKEN": "xoxb-revoked", "SLACK_APP_TOKEN": slackfake.AppToken, "SLACK_API_URL": slack.URL()},
			"threadflow: slack: Slack refused SLACK_BOT_TOKEN (auth.test: invalid_auth); copy the Bot User OAuth Token from OAuth & Permissions into SLACK_BOT_TOKEN\n"},
		{"Discord unreachable",
			map[string]string{"DISCORD_BOT_TOKEN": "fake-discord-token", "DISCORD_APP_ID": discordfake.AppID, "DISCORD_API_URL": unreachable},
			"threadflow: discord: cannot reach Discord to check DISCORD_BOT_TOKEN: Get \"https://discord.com/api/v9/users/@me\": dial tcp " +
				strings.TrimPrefix(unreachable, "http://") + ": connect: connection refused; check the network, and DISCORD_API_URL if set\n"},
	}
	for _, tt := range failures {
		t.Run(tt.name, func(t *testing.T) {
			env := cliEnv(t)
			env["HTTP_ADDR"] = "127.0.0.1:0"
			for k, v := range tt.env {
				env[k] = v
			}
			b := runBot(t, env)
			code := exitCode(b.result(t))
			// The first start in a fresh home also says where it created the database.
			stderr := regexp.MustCompile(`(?m)^New database .*\n`).ReplaceAllString(b.stderr.String(), "")
			if code != 1 || b.stdout.String() != "" || stderr != tt.want {
				t.Errorf("bot = exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 1, nothing announced, and:\n%s", code, b.stdout, b.stderr, tt.want)
			}
		})
	}

}

// A DATABASE_URL naming a database the server does not have says how to create it, and never
// shows the URL's password (issue 26).
func TestAMissingPostgresDatabaseGetsACreatedbHint(t *testing.T) {
	dbURL, name := dbtest.MissingPostgresDatabase(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	env := cliEnv(t)
	env["DATABASE_URL"] = dbURL
	b := runBot(t, env, "workflow", "runs")
	code := exitCode(b.result(t))
	stderr := b.stderr.String()
	password, _ := u.User.Password()
	var said string // the error line, after the log line LOG_LEVEL=error still shows
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "threadflow: ") {
			said = line
		}
	}
	if code != 1 || !strings.HasPrefix(said, "threadflow: open postgres database ") ||
		!strings.Contains(said, "-U "+u.User.Username()+" "+name+"` (or `CREATE DATABASE "+name+";` in psql)") ||
		!strings.Contains(said, "create it with `createdb -h "+u.Hostname()+" -p ") || strings.Contains(stderr, password) {
		t.Errorf("bot workflow runs on a missing database = exit %d, stderr:\n%s\nwant exit 1 and how to create %s, without the password", code, stderr, name)
	}
}
