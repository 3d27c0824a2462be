package main

import (
	"fmt"
	"strconv"
	"time"

	"threadflow/agent"
	"threadflow/db"
	"threadflow/orchestrator/execution"
)

// settings lists every configuration variable in the order help prints them. Keep README.md and
// .env.example in step with it.
var settings = append(coreSettings, signInSettings...)

// coreSettings are the settings besides the dashboard's sign-in (signin.go).
var coreSettings = []setting{
	{env: "DATABASE_URL", secret: true, show: redactURL, doc: "(SQLite)",
		usage: "postgres:// or postgresql:// URL selects PostgreSQL; empty keeps runs in SQLite under THREADFLOW_HOME",
		apply: func(c *Config, v string, _ hostInfo) error { return c.setDatabase(v) }},
	{env: "THREADFLOW_HOME", doc: "~/.local/share/threadflow",
		usage: "directory for the SQLite database, run directories and outputs, the same wherever a command runs ($XDG_DATA_HOME/threadflow when set); created if missing",
		apply: func(c *Config, v string, h hostInfo) error { return c.setHome(v, h) }},
	{env: "LOG_LEVEL", def: "info", doc: "info (warn for chat, workflow, prune)", usage: "debug, info, warn or error",
		apply: func(c *Config, v string, _ hostInfo) (err error) { c.LogLevel, err = parseLevel(v); return err }},
	{env: "LOG_FORMAT", doc: "console on a terminal, else json", usage: "json or console",
		apply: func(c *Config, v string, h hostInfo) (err error) { c.LogFormat, err = parseLogFormat(v, h); return err }},
	{env: "HTTP_ADDR", def: "127.0.0.1:8080",
		usage: "host:port of the health, metrics and dashboard server (port 0 picks a free one)",
		apply: intoString(func(c *Config) *string { return &c.HTTPAddr }, checkHostPort)},
	{env: "LEASE_TTL", def: "30s", usage: "how long a claimed run stays owned without a heartbeat (at least 1s)",
		apply: intoDuration(func(c *Config) *time.Duration { return &c.LeaseTTL }, time.Second)},
	{env: "RETENTION", def: "90d",
		usage: "how long completed and cancelled runs are kept after they finish, with their events, transcripts and files: 90d, 720h... at least 1h; off keeps them forever",
		apply: intoRetention(func(c *Config) *time.Duration { return &c.Retention.Finished })},
	{env: "RETENTION_UNFINISHED", def: "365d",
		usage: "how long failed and paused runs are kept after their last change (at least 1h; off keeps them forever)",
		apply: intoRetention(func(c *Config) *time.Duration { return &c.Retention.Unfinished })},
	{env: "REQUESTER_DM_AFTER", def: "10m", usage: "a run's requester gets a direct message when a gate of it is decided, or it ends, this long after they started it, unless they did it (at least 1s)",
		apply: intoDuration(func(c *Config) *time.Duration { return &c.RequesterDMAfter }, time.Second)},
	{env: "MAX_RECOVERIES", def: "3", usage: "times a run is rescued after a crash without progress before it fails",
		apply: intoInt(func(c *Config) *int { return &c.MaxRecoveries }, 0)},
	{env: "SHUTDOWN_GRACE", def: "20s", usage: "how long shutdown waits for running nodes before handing their runs back",
		apply: intoDuration(func(c *Config) *time.Duration { return &c.ShutdownGrace }, 0)},
	{env: "MAX_PARALLEL_NODES", def: "4", usage: "nodes of one run executed at once (at least 1)",
		apply: intoInt(func(c *Config) *int { return &c.MaxParallelNodes }, 1)},
	{env: "WORKERS", def: "8", usage: "runs executed at once by this replica (at least 1)",
		apply: intoInt(func(c *Config) *int { return &c.Workers }, 1)},
	{env: "MIN_FREE_DISK", def: "256MB", usage: "free space under THREADFLOW_HOME below which no new run is claimed and /readyz fails (0 turns it off)",
		apply: func(c *Config, v string, _ hostInfo) (err error) { c.MinFreeDisk, err = parseSize(v); return err }},
	{env: "MAX_ARGS_BYTES", def: "16KB",
		usage: "largest free text one message may carry (a run's arguments, a note, a gate reply): 16KB, 64KB...; at most 100KB",
		apply: intoBytes(func(c *Config) *int64 { return &c.MaxArgsBytes }, 1, maxArgsBytesCeiling)},
	{env: "WORKFLOWS_DIR", usage: "colon-separated directories of workflow YAML files, besides the bundled ones (one ending in .archon/workflows is read as Archon's, docs/archon.md)",
		apply: intoList(func(c *Config) *[]string { return &c.WorkflowsDirs }, parseDirs)},
	{env: "REPO_PATH", usage: "git repository whose worktrees runs work in (empty: a plain directory per run)",
		apply: intoString(func(c *Config) *string { return &c.RepoPath }, checkRepo)},
	{env: "WORKSPACE_REMOTE", secret: true, show: execution.RedactRemote,
		usage: "git remote (a bare repository's path, or an https or ssh URL) each completed node's changes are pushed to, so any replica can recreate a run's workspace (empty: replicas must share THREADFLOW_HOME)",
		apply: intoString(func(c *Config) *string { return &c.WorkspaceRemote }, checkRemoteSyntax)},
	{env: "DEFAULT_PROVIDER", usage: "AI provider of agent nodes that name none: claude or codex (empty: nodes must name one)",
		apply: intoString(func(c *Config) *string { return &c.DefaultProvider }, func(v string) error {
			return oneOf(v, "", "claude", "codex")
		})},
	{env: "CLAUDE_BIN", def: "claude", usage: "Claude Code CLI executable",
		apply: intoString(func(c *Config) *string { return &c.ClaudeBin }, nil)},
	{env: "CODEX_BIN", def: "codex", usage: "Codex CLI executable",
		apply: intoString(func(c *Config) *string { return &c.CodexBin }, nil)},
	{env: "AGENT_PERMISSIONS", def: "edit", usage: "what AI nodes may do unless they set `permissions`: read, edit or full",
		apply: func(c *Config, v string, _ hostInfo) (err error) {
			c.Agent.Permissions, err = agent.ParsePermissions(v)
			return err
		}},
	{env: "AGENT_ALLOW_FULL", def: "false", usage: "true lets AI nodes use permissions: full (no sandbox, no permission checks)",
		apply: func(c *Config, v string, _ hostInfo) (err error) { c.Agent.AllowFull, err = parseBool(v); return err }},
	{env: "AGENT_TIMEOUT", def: "30m", usage: "the longest one AI turn (agent node turn or chat answer) may take (at least 1s)",
		apply: intoDuration(func(c *Config) *time.Duration { return &c.Agent.Timeout }, time.Second)},
	{env: "AGENT_IDLE_TIMEOUT", def: "10m", usage: "an AI CLI that prints no event for this long is stopped (at least 1s)",
		apply: intoDuration(func(c *Config) *time.Duration { return &c.Agent.IdleTimeout }, time.Second)},
	{env: "AGENT_PRICES_FILE", usage: "JSON file of model prices (USD per million tokens) that replace or extend the built-in table; turns priced from it are marked estimated",
		apply: func(c *Config, v string, _ hostInfo) (err error) {
			if v != "" {
				c.Agent.Prices, err = agent.LoadPrices(v)
			}
			return err
		}},
	{env: "AGENT_DAILY_BUDGET_USD", usage: "what the agent turns of every run may spend per UTC day, summed in the database across replicas; reaching it pauses runs before their next turn (empty: no limit)",
		apply: func(c *Config, v string, _ hostInfo) (err error) { c.DailyBudget, err = parseBudget(v); return err }},
	{env: "ALLOWED_USER_IDS", usage: "comma-separated users who may use the bot, e.g. slack:U123,discord:4567 (empty: everyone)",
		apply: intoList(func(c *Config) *[]string { return &c.AllowedUserIDs }, parseUserIDs)},
	{env: "ADMIN_USER_IDS", usage: "comma-separated users who may resume and abandon anyone's runs (owners may their own) and answer gates listing @admins; empty: console:local is the admin",
		apply: intoList(func(c *Config) *[]string { return &c.AdminUserIDs }, parseUserIDs)},
	{env: "SLACK_BOT_TOKEN", usage: "Slack bot token (xoxb-...); enables Slack together with SLACK_APP_TOKEN",
		apply: intoString(func(c *Config) *string { return &c.Slack.BotToken }, prefixed("xoxb-", "a Slack bot token"))},
	{env: "SLACK_APP_TOKEN", usage: "Slack app-level token for Socket Mode (xapp-...)",
		apply: intoString(func(c *Config) *string { return &c.Slack.AppToken }, prefixed("xapp-", "a Slack app-level token"))},
	{env: "SLACK_API_URL", usage: "Slack Web API base URL (empty: https://slack.com/api/); for tests",
		apply: intoString(func(c *Config) *string { return &c.Slack.APIURL }, checkAPIURL)},
	{env: "DISCORD_BOT_TOKEN", usage: "Discord bot token; enables Discord",
		apply: intoString(func(c *Config) *string { return &c.Discord.BotToken }, nil)},
	{env: "DISCORD_APP_ID", usage: "Discord application id (required with DISCORD_BOT_TOKEN)",
		apply: intoString(func(c *Config) *string { return &c.Discord.AppID }, checkSnowflake)},
	{env: "DISCORD_GUILD_IDS", usage: "comma-separated guild ids to register /workflow in (empty: globally)",
		apply: intoList(func(c *Config) *[]string { return &c.Discord.GuildIDs }, parseSnowflakes)},
	{env: "DISCORD_API_URL", usage: "Discord API base URL (empty: https://discord.com/api/); for tests",
		apply: intoString(func(c *Config) *string { return &c.Discord.APIURL }, checkAPIURL)},
	{env: "DASHBOARD_TOKEN", secret: true, usage: "bearer token of the web dashboard; required when HTTP_ADDR is not loopback",
		apply: intoString(func(c *Config) *string { return &c.DashboardToken }, nil)},
	{env: "REPLICA_ID", doc: "hostname-pid", usage: "name of this process in run leases; unique per replica",
		apply: func(c *Config, v string, h hostInfo) (err error) { c.ReplicaID, err = parseReplicaID(v, h); return err }},
}

// applyFunc parses a value (the default already substituted) into its Config field.
type applyFunc = func(c *Config, v string, h hostInfo) error

// intoString stores v after check (nil accepts anything).
func intoString(field func(*Config) *string, check func(string) error) applyFunc {
	return func(c *Config, v string, _ hostInfo) error {
		*field(c) = v
		if check == nil {
			return nil
		}
		return check(v)
	}
}

func intoDuration(field func(*Config) *time.Duration, minimum time.Duration) applyFunc {
	return func(c *Config, v string, _ hostInfo) (err error) {
		*field(c), err = parseDuration(v, minimum)
		return err
	}
}

func intoRetention(field func(*Config) *time.Duration) applyFunc {
	return func(c *Config, v string, _ hostInfo) (err error) {
		*field(c), err = parseRetention(v)
		return err
	}
}

func intoInt(field func(*Config) *int, minimum int) applyFunc {
	return func(c *Config, v string, _ hostInfo) (err error) {
		*field(c), err = parseInt(v, minimum)
		return err
	}
}

func intoBytes(field func(*Config) *int64, minimum, maximum int64) applyFunc {
	return func(c *Config, v string, _ hostInfo) (err error) {
		*field(c), err = parseByteSize(v, minimum, maximum)
		return err
	}
}

func intoList(field func(*Config) *[]string, parse func(string) ([]string, error)) applyFunc {
	return func(c *Config, v string, _ hostInfo) (err error) {
		*field(c), err = parse(v)
		return err
	}
}

// prefixed accepts an empty value or one with the given prefix: a pasted token of the wrong kind
// (a user token instead of a bot token) is caught at start-up rather than as an API error later.
func prefixed(prefix, what string) func(string) error {
	return func(v string) error { return hasPrefix(v, prefix, what) }
}

// parseReplicaID defaults the replica id to hostname-pid, unique among processes sharing a database.
func parseReplicaID(v string, h hostInfo) (string, error) {
	if v == "" {
		return fmt.Sprintf("%s-%d", h.hostname, h.pid), nil
	}
	return v, checkToken(v, 128)
}

func parseBool(v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("use true or false")
	}
	return b, nil
}

// parseBudget reads an amount of US dollars more than 0 as nanodollars; empty is no budget.
func parseBudget(v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	usd, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("use an amount of US dollars more than 0, like 25 or 2.50")
	}
	n, err := db.USDNanos(usd)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("use an amount of US dollars more than 0, like 25 or 2.50")
	}
	return n, nil
}
