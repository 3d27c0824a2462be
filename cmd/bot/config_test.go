package main

import (
	"errors"
	"flag"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"

	"threadflow/agent"
	"threadflow/db"
)

// envOf turns a map into a getenv.
func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

var testHost = hostInfo{hostname: "box", pid: 42, defaultHome: "/home/box/.local/share/threadflow"}

func TestLoadConfigDefaults(t *testing.T) {
	c, err := loadConfig("serve", nil, envOf(nil), testHost)
	if err != nil {
		t.Fatalf("loadConfig with an empty environment: %v", err)
	}
	want := Config{
		Engine: EngineSQLite, Home: "/home/box/.local/share/threadflow", HomeDefault: true, LogLevel: zapcore.InfoLevel, LogFormat: "json",
		HTTPAddr: "127.0.0.1:8080", LeaseTTL: 30 * time.Second, RequesterDMAfter: 10 * time.Minute, MaxRecoveries: 3,
		ShutdownGrace: 20 * time.Second, MaxParallelNodes: 4, Workers: 8, MinFreeDisk: 256_000_000,
		MaxArgsBytes: 16_000, Retention: db.DefaultRetention,
		ClaudeBin: "claude", CodexBin: "codex", ReplicaID: "box-42", Host: "box",
		Agent:  agent.Config{Permissions: agent.PermEdit, Timeout: 30 * time.Minute, IdleTimeout: 10 * time.Minute},
		SignIn: SignInConfig{SessionLifetime: 12 * time.Hour, OIDCIDClaim: "sub"},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", c, want)
	}
	if got := c.SQLitePath(); got != "/home/box/.local/share/threadflow/threadflow.db" {
		t.Errorf("SQLitePath = %q, want /home/box/.local/share/threadflow/threadflow.db", got)
	}
}

func TestLoadConfigLogFormatFollowsTerminal(t *testing.T) {
	c, err := loadConfig("serve", nil, envOf(nil), hostInfo{stderrTTY: true, hostname: "h", pid: 1, defaultHome: "/home/h/.local/share/threadflow"})
	if err != nil {
		t.Fatal(err)
	}
	if c.LogFormat != "console" {
		t.Errorf("LogFormat on a terminal = %q, want console", c.LogFormat)
	}
}

func TestLoadConfigValues(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil { // REPO_PATH must be a repository
		t.Fatalf("git init: %v %s", err, out)
	}
	env := map[string]string{
		"DATABASE_URL":         "postgresql://bot:pw@db:5432/tf?sslmode=disable",
		"THREADFLOW_HOME":      dir,
		"LOG_LEVEL":            "debug",
		"LOG_FORMAT":           "console",
		"HTTP_ADDR":            "0.0.0.0:9090",
		"LEASE_TTL":            "1m",
		"MAX_RECOVERIES":       "0",
		"SHUTDOWN_GRACE":       "5s",
		"MAX_PARALLEL_NODES":   "2",
		"WORKERS":              "1",
		"MIN_FREE_DISK":        "1GiB",
		"MAX_ARGS_BYTES":       "64KiB",
		"RETENTION":            "30d",
		"RETENTION_UNFINISHED": "off",
		"WORKFLOWS_DIR":        dir + "::" + dir,
		"REPO_PATH":            dir,
		"WORKSPACE_REMOTE":     "https://bot:tok@git.example.com/ws.git",
		"DEFAULT_PROVIDER":     "codex",
		"ALLOWED_USER_IDS":     "slack:U123, discord:4567,console:alice",
		"ADMIN_USER_IDS":       "web:ops@example.com",
		"SLACK_BOT_TOKEN":      "xoxb-1",
		"SLACK_APP_TOKEN":      "xapp-1",
		"SLACK_API_URL":        "http://127.0.0.1:1/api/",
		"DISCORD_BOT_TOKEN":    "tok",
		"DISCORD_APP_ID":       "123",
		"DISCORD_GUILD_IDS":    "1,2",
		"REPLICA_ID":           "replica-a",
		"DASHBOARD_TOKEN":      "dash", // required beyond loopback (issue 8)
	}
	c, err := loadConfig("serve", nil, envOf(env), testHost)
	if err != nil {
		t.Fatalf("loadConfig: %v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"Engine", c.Engine, EnginePostgres},
		{"LogLevel", c.LogLevel, zapcore.DebugLevel},
		{"LeaseTTL", c.LeaseTTL, time.Minute},
		{"MaxRecoveries", c.MaxRecoveries, 0},
		{"MinFreeDisk", c.MinFreeDisk, uint64(1 << 30)},
		{"MaxArgsBytes", c.MaxArgsBytes, int64(65536)},
		{"Retention", c.Retention, db.Retention{Finished: 30 * 24 * time.Hour}},
		{"WorkflowsDirs", c.WorkflowsDirs, []string{dir, dir}},
		{"AllowedUserIDs", c.AllowedUserIDs, []string{"slack:U123", "discord:4567", "console:alice"}},
		{"GuildIDs", c.Discord.GuildIDs, []string{"1", "2"}},
		{"Slack enabled", c.Slack.Enabled(), true},
		{"Discord enabled", c.Discord.Enabled(), true},
		{"ReplicaID", c.ReplicaID, "replica-a"},
		{"RepoPath", c.RepoPath, dir},
		{"WorkspaceRemote", c.WorkspaceRemote, "https://bot:tok@git.example.com/ws.git"},
		{"redactedDatabase", c.redactedDatabase(), "postgresql://bot:xxxxx@db:5432/tf?sslmode=disable"},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

func TestLoadConfigFlagsOverrideEnvironment(t *testing.T) {
	env := map[string]string{"HTTP_ADDR": "127.0.0.1:1", "LOG_LEVEL": "error"}
	c, err := loadConfig("serve", []string{"-http-addr=127.0.0.1:0", "-log-level", "warn"}, envOf(env), testHost)
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTPAddr != "127.0.0.1:0" || c.LogLevel != zapcore.WarnLevel {
		t.Errorf("HTTPAddr=%q LogLevel=%v, want the flags' 127.0.0.1:0 and warn", c.HTTPAddr, c.LogLevel)
	}
}

func TestLoadConfigRejects(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string // the whole message the user sees
	}{
		{"log level", map[string]string{"LOG_LEVEL": "loud"}, nil,
			`LOG_LEVEL="loud" is not valid; use one of debug, info, warn, error`},
		{"log format", map[string]string{"LOG_FORMAT": "xml"}, nil,
			`LOG_FORMAT="xml" is not valid; use one of json, console`},
		{"mysql url", map[string]string{"DATABASE_URL": "mysql://x"}, nil,
			`DATABASE_URL="mysql://x" is not valid; use a postgres:// or postgresql:// URL, or leave it empty to use SQLite under THREADFLOW_HOME`},
		{"url password redacted", map[string]string{"DATABASE_URL": "mysql://u:hunter2@h/d"}, nil,
			`DATABASE_URL="mysql://u:xxxxx@h/d" is not valid; use a postgres:// or postgresql:// URL, or leave it empty to use SQLite under THREADFLOW_HOME`},
		{"keyword dsn hidden", map[string]string{"DATABASE_URL": "host=h password=hunter2"}, nil,
			`DATABASE_URL="(unparsable, hidden)" is not valid; use a postgres:// or postgresql:// URL, or leave it empty to use SQLite under THREADFLOW_HOME`},
		{"lease ttl unit", map[string]string{"LEASE_TTL": "30"}, nil,
			`LEASE_TTL="30" is not valid; use a duration of at least 1s, such as 30s or 2m`},
		{"lease ttl too short", map[string]string{"LEASE_TTL": "500ms"}, nil,
			`LEASE_TTL="500ms" is not valid; use a duration of at least 1s, such as 30s or 2m`},
		{"negative recoveries", map[string]string{"MAX_RECOVERIES": "-1"}, nil,
			`MAX_RECOVERIES="-1" is not valid; use a whole number of at least 0`},
		{"free disk size", map[string]string{"MIN_FREE_DISK": "lots"}, nil,
			`MIN_FREE_DISK="lots" is not valid; use a size such as 256MB, 1GiB or 0 (off)`},
		{"retention too short", map[string]string{"RETENTION": "30m"}, nil,
			`RETENTION="30m" is not valid; use a number of days such as 90d, a duration of at least 1h such as 720h, or off to keep runs forever`},
		{"retention in weeks", map[string]string{"RETENTION_UNFINISHED": "2w"}, nil,
			`RETENTION_UNFINISHED="2w" is not valid; use a number of days such as 90d, a duration of at least 1h such as 720h, or off to keep runs forever`},
		{"zero workers", map[string]string{"WORKERS": "0"}, nil,
			`WORKERS="0" is not valid; use a whole number of at least 1`},
		{"args size too large", map[string]string{"MAX_ARGS_BYTES": "1MB"}, nil,
			`MAX_ARGS_BYTES="1MB" is not valid; use a size from 1 B to 100 kB, such as 16KB or 64KiB (KB = 1000 bytes, KiB = 1024)`},
		{"http addr", map[string]string{"HTTP_ADDR": "8080"}, nil,
			`HTTP_ADDR="8080" is not valid; use host:port such as 127.0.0.1:8080, or 0.0.0.0:8080 to listen on every interface`},
		{"http port range", map[string]string{"HTTP_ADDR": ":70000"}, nil,
			`HTTP_ADDR=":70000" is not valid; use host:port such as 127.0.0.1:8080, or 0.0.0.0:8080 to listen on every interface`},
		{"provider", map[string]string{"DEFAULT_PROVIDER": "gpt"}, nil,
			`DEFAULT_PROVIDER="gpt" is not valid; use one of empty, claude, codex`},
		{"user id without platform", map[string]string{"ADMIN_USER_IDS": "slack:U1,alice"}, nil,
			`ADMIN_USER_IDS="slack:U1,alice" is not valid; "alice" is not a platform-qualified user id; use comma-separated ids such as slack:U123,discord:4567,console:alice`},
		{"missing workflows dir", map[string]string{"WORKFLOWS_DIR": "/does/not/exist"}, nil,
			`WORKFLOWS_DIR="/does/not/exist" is not valid; "/does/not/exist": use an existing directory`},
		{"repo path not a repository", map[string]string{"REPO_PATH": "/"}, nil,
			`REPO_PATH="/" is not valid; use a git repository (git rev-parse says: fatal: not a git repository (or any of the parent directories): .git); run git init there, or leave REPO_PATH empty`},
		{"workspace remote credentials hidden", map[string]string{"WORKSPACE_REMOTE": "https://bot:s3cret@h/ws.git --upload-pack=x"}, nil,
			`WORKSPACE_REMOTE="https://h/ws.git%20--upload-pack=x" is not valid; contains white space or control characters: use a git URL or a repository path`},
		{"workspace remote as an option", map[string]string{"WORKSPACE_REMOTE": "--upload-pack=touch"}, nil,
			`WORKSPACE_REMOTE="--upload-pack=touch" is not valid; starts with '-': use a git URL or a repository path`},
		{"slack token kind hidden", map[string]string{"SLACK_BOT_TOKEN": "xoxp-user-secret", "SLACK_APP_TOKEN": "xapp-1"}, nil,
			`SLACK_BOT_TOKEN (value hidden) is not valid; use a Slack bot token, which starts with xoxb-`},
		{"slack half configured", map[string]string{"SLACK_BOT_TOKEN": "xoxb-1"}, nil,
			`SLACK_BOT_TOKEN and SLACK_APP_TOKEN must be set together (Socket Mode needs both); set the missing one or unset both`},
		{"discord app id", map[string]string{"DISCORD_APP_ID": "my-app"}, nil,
			`DISCORD_APP_ID="my-app" is not valid; use a numeric Discord id such as 123456789012345678`},
		{"api url", map[string]string{"DISCORD_API_URL": "ftp://x"}, nil,
			`DISCORD_API_URL="ftp://x" is not valid; use an http:// or https:// URL, or leave it empty for the real API`},
		{"agent permissions", map[string]string{"AGENT_PERMISSIONS": "write"}, nil,
			`AGENT_PERMISSIONS="write" is not valid; "write" is not a permission level: use one of read, edit, full`},
		{"full without the operator's consent", map[string]string{"AGENT_PERMISSIONS": "full"}, nil,
			"AGENT_PERMISSIONS=full needs AGENT_ALLOW_FULL=true: full lets the AI CLIs run anything on this host without a sandbox; use edit, or allow full explicitly"},
		{"agent idle timeout", map[string]string{"AGENT_IDLE_TIMEOUT": "0s"}, nil,
			`AGENT_IDLE_TIMEOUT="0s" is not valid; use a duration of at least 1s, such as 30s or 2m`},
		{"replica id", map[string]string{"REPLICA_ID": "a b"}, nil,
			`REPLICA_ID="a b" is not valid; use at most 128 characters without spaces`},
		{"flag named as given", nil, []string{"-lease-ttl=0s"},
			`-lease-ttl="0s" is not valid; use a duration of at least 1s, such as 30s or 2m`},
		{"unknown flag", nil, []string{"-verbose"},
			`serve: flag provided but not defined: -verbose; run "threadflow help" to list the flags`},
		{"secret has no flag", nil, []string{"-slack-bot-token=xoxb-1"},
			`serve: flag provided but not defined: -slack-bot-token; run "threadflow help" to list the flags`},
		{"stray argument", nil, []string{"now"},
			`serve: unexpected argument "now"; settings are flags such as -http-addr=127.0.0.1:8080`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadConfig("serve", tt.args, envOf(tt.env), testHost)
			if err == nil {
				t.Fatal("loadConfig accepted the value")
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error:\n got %s\nwant %s", got, tt.want)
			}
			if exitCode(err) != 2 {
				t.Errorf("exitCode = %d, want 2 for a configuration mistake", exitCode(err))
			}
		})
	}
}

func TestLoadConfigHelp(t *testing.T) {
	_, err := loadConfig("serve", []string{"-h"}, envOf(nil), testHost)
	if !errors.Is(err, flag.ErrHelp) {
		t.Errorf("loadConfig(-h) = %v, want flag.ErrHelp", err)
	}
}

func TestSettingsAreDocumented(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range settings {
		if seen[s.env] {
			t.Errorf("%s is listed twice", s.env)
		}
		seen[s.env] = true
		if s.usage == "" {
			t.Errorf("%s has no usage text for help", s.env)
		}
		if s.secret && s.show == nil && strings.Contains(s.usage, "=") {
			t.Errorf("%s usage looks like it shows a value", s.env)
		}
	}
}
