package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"threadflow/agent"
	"threadflow/platform"
)

// setting is one configuration variable. The table below is the single source of the names,
// defaults and meanings that loadConfig parses and help prints, so they cannot drift apart.
type setting struct {
	env    string
	def    string // value used when the variable is empty
	doc    string // default as shown in help when it is computed rather than def
	usage  string
	secret bool                // never a flag (command lines are visible in ps) and never echoed...
	show   func(string) string // ...unless show redacts it for display
	apply  applyFunc
}

// isSecret reports whether s holds a secret: marked so here, or a chat platform's credential
// (platform.SecretEnv, the list the agent also hides from the CLIs it starts).
func (s setting) isSecret() bool { return s.secret || slices.Contains(platform.SecretEnv(), s.env) }

// secretValues lists the values of the secret settings that get returns set, to scrub from text
// that might quote them: a database URL's password, every other secret whole.
func secretValues(get func(env string) string) []string {
	var out []string
	for _, s := range settings {
		v := strings.TrimSpace(get(s.env))
		if s.env == "DATABASE_URL" {
			v = urlPassword(v)
		}
		if v != "" && s.isSecret() {
			out = append(out, v)
		}
	}
	return out
}

// flagName is the serve/migrate flag overriding s, e.g. -log-level for LOG_LEVEL.
func (s setting) flagName() string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(s.env, "THREADFLOW_"), "_", "-"))
}

// shownDefault is the default as help and README present it.
func (s setting) shownDefault() string {
	if s.doc != "" {
		return s.doc
	}
	return s.def
}

// given is a raw value and the name the user gave it under (variable or flag).
type given struct{ value, name string }

// loadConfig reads every setting from getenv, lets flags in args override the non-secret ones,
// and validates the result. A bad value is a *settingError naming the variable or flag.
// It returns flag.ErrHelp when args ask for help.
func loadConfig(cmd string, args []string, getenv func(string) string, h hostInfo) (Config, error) {
	raw := make(map[string]given, len(settings))
	for _, s := range settings {
		raw[s.env] = given{strings.TrimSpace(getenv(s.env)), s.env}
	}
	if err := parseFlags(cmd, args, raw); err != nil {
		return Config{}, err
	}
	c := Config{Host: h.hostname, scrubbed: secretValues(func(env string) string { return raw[env].value })}
	for _, s := range settings {
		if err := applySetting(&c, s, raw[s.env], h); err != nil {
			return Config{}, err
		}
	}
	if err := c.check(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// parseFlags records flag values in raw, over the environment's.
func parseFlags(cmd string, args []string, raw map[string]given) error {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported as one line by run; help is printed by help
	for _, s := range settings {
		if s.isSecret() {
			continue
		}
		name := s.flagName()
		fs.Func(name, s.usage, func(v string) error {
			raw[s.env] = given{strings.TrimSpace(v), "-" + name}
			return nil
		})
	}
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return err
	case err != nil:
		return &usageError{fmt.Sprintf("%s: %s; run \"threadflow help\" to list the flags", cmd, flagProblem(fs, err, "-"))}
	case fs.NArg() > 0:
		return &usageError{fmt.Sprintf("%s: unexpected argument %q; settings are flags such as -http-addr=127.0.0.1:8080", cmd, fs.Arg(0))}
	}
	return nil
}

// applySetting parses one given value (or the default) into c.
func applySetting(c *Config, s setting, g given, h hostInfo) error {
	v := g.value
	if v == "" {
		v = s.def
	}
	err := s.apply(c, v, h)
	if err == nil {
		return nil
	}
	e := &settingError{Name: g.name, Value: v, Secret: s.isSecret(), Accepted: err.Error()}
	if s.show != nil {
		e.Value, e.Secret = s.show(v), false
	}
	return e
}

// check validates settings that only make sense together.
func (c *Config) check() error {
	if c.Home == "" {
		return &usageError{"THREADFLOW_HOME is not set, and neither is HOME (nor XDG_DATA_HOME) to keep runs under by default; set THREADFLOW_HOME to the directory that keeps the runs"}
	}
	if (c.Slack.BotToken == "") != (c.Slack.AppToken == "") {
		return &usageError{"SLACK_BOT_TOKEN and SLACK_APP_TOKEN must be set together (Socket Mode needs both); set the missing one or unset both"}
	}
	if c.Discord.BotToken != "" && c.Discord.AppID == "" {
		return &usageError{"DISCORD_APP_ID is required with DISCORD_BOT_TOKEN to register the /workflow command; copy the Application ID from the Discord developer portal"}
	}
	if c.Agent.Permissions == agent.PermFull && !c.Agent.AllowFull {
		return &usageError{"AGENT_PERMISSIONS=full needs AGENT_ALLOW_FULL=true: full lets the AI CLIs run anything on this host without a sandbox; use edit, or allow full explicitly"}
	}
	// web dashboard (issue 8): beyond loopback the dashboard's buttons act on runs, so it needs a token.
	if c.DashboardToken == "" && !loopback(c.HTTPAddr) {
		return &usageError{"DASHBOARD_TOKEN is required when HTTP_ADDR (" + c.HTTPAddr + ") is not a loopback address: the dashboard can approve and abandon runs; set DASHBOARD_TOKEN to a long random string, or listen on 127.0.0.1"}
	}
	return c.SignIn.check()
}
