package main

import (
	"path/filepath"
	"time"

	"go.uber.org/zap/zapcore"

	"threadflow/agent"
	chatcmd "threadflow/commands"
	"threadflow/db"
)

// Engine names the database engine the bot stores runs in.
type Engine string

// The engines. DATABASE_URL selects PostgreSQL; without it runs live in a SQLite file.
const (
	EngineSQLite   Engine = "sqlite"
	EnginePostgres Engine = "postgres"
)

// Config is the bot's configuration: environment variables, overridden by flags of serve and
// migrate. Every field is validated by loadConfig; see settings.go for names, defaults and meaning.
type Config struct {
	Engine      Engine
	DatabaseURL string // secret: may hold a password; log redactedDatabase instead
	Home        string // THREADFLOW_HOME, absolute: SQLite file, worktrees and other local state
	HomeDefault bool   // THREADFLOW_HOME was unset: Home is the per-user default (defaultHome)

	LogLevel  zapcore.Level
	LogFormat string // "json" or "console"
	HTTPAddr  string // host:port of the health, metrics and dashboard server

	LeaseTTL         time.Duration // how long a claimed run's lease lasts without a heartbeat
	RequesterDMAfter time.Duration // how long after starting a run its requester is told directly of its decisions and end
	MaxRecoveries    int           // rescues without progress before a run moves to failed
	ShutdownGrace    time.Duration // how long shutdown waits for running nodes to finish
	MaxParallelNodes int           // nodes of one run executed at once
	Workers          int           // runs executed at once by this replica
	MinFreeDisk      uint64        // bytes free under Home below which no run is claimed; 0 turns it off
	MaxArgsBytes     int64         // MAX_ARGS_BYTES: free text one message may carry
	Retention        db.Retention  // RETENTION, RETENTION_UNFINISHED: how long runs are kept (0: forever)

	WorkflowsDirs   []string // extra workflow directories, searched in order after the bundled ones
	RepoPath        string   // optional git repository that runs get worktrees of
	WorkspaceRemote string   // secret: WORKSPACE_REMOTE, git remote run workspaces are pushed to; may hold credentials
	HomeToken       string   // the token of THREADFLOW_HOME's marker file, read by prepareHome
	Host            string   // this host's name, recorded with the workspaces it makes
	DefaultProvider string   // "", "claude" or "codex"
	ClaudeBin       string
	CodexBin        string
	Agent           agent.Config // AGENT_PERMISSIONS, AGENT_ALLOW_FULL, AGENT_TIMEOUT, AGENT_IDLE_TIMEOUT, AGENT_PRICES_FILE
	DailyBudget     int64        // AGENT_DAILY_BUDGET_USD in nanodollars; 0: none

	AllowedUserIDs []string // platform-qualified ids (slack:U123); empty means no allow-list
	AdminUserIDs   []string // platform-qualified ids allowed to administer runs of others

	Slack          SlackConfig
	Discord        DiscordConfig
	DashboardToken string // secret
	SignIn         SignInConfig
	ReplicaID      string // lease owner name of this process

	scrubbed []string // the secret values among the settings (secretValues), as loadConfig read them
}

// limits are the input limits every adapter's messages are checked against.
func (c Config) limits() chatcmd.Limits { return chatcmd.Limits{MaxArgsBytes: int(c.MaxArgsBytes)} }

// SlackConfig holds the Slack adapter's settings. Slack is enabled when both tokens are set.
type SlackConfig struct {
	BotToken string // secret, xoxb-...
	AppToken string // secret, xapp-... (Socket Mode)
	APIURL   string // override of https://slack.com/api/, for tests against a fake
}

// Enabled reports whether the Slack adapter should start.
func (s SlackConfig) Enabled() bool { return s.BotToken != "" }

// DiscordConfig holds the Discord adapter's settings. Discord is enabled when the token is set.
type DiscordConfig struct {
	BotToken string // secret
	AppID    string
	GuildIDs []string // guilds to register slash commands in; empty registers them globally
	APIURL   string   // override of the Discord API base URL, for tests against a fake
}

// Enabled reports whether the Discord adapter should start.
func (d DiscordConfig) Enabled() bool { return d.BotToken != "" }

// SQLitePath is where the SQLite engine keeps its database.
func (c Config) SQLitePath() string { return filepath.Join(c.Home, "threadflow.db") }

// redactedDatabase names the database for logs and error messages without its password.
func (c Config) redactedDatabase() string {
	if c.Engine == EnginePostgres {
		return redactURL(c.DatabaseURL)
	}
	return c.SQLitePath()
}

// secrets lists the secret values set in c, so text that might quote them can be scrubbed.
func (c Config) secrets() []string { return c.scrubbed }

// hostInfo is what defaults depend on besides the environment: injected so tests control it.
type hostInfo struct {
	stderrTTY   bool   // log to a person (console) rather than to a collector (json)
	hostname    string // with pid, the default replica id
	pid         int
	defaultHome string // THREADFLOW_HOME when unset (defaultHome); "" when the user has no home directory
}
