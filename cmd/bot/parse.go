package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"go.uber.org/zap/zapcore"

	"threadflow/platform"
)

// The parsers below return an error whose text says what would be accepted; applySetting turns it
// into a *settingError naming the variable and the value.

// setDatabase selects the engine from DATABASE_URL.
func (c *Config) setDatabase(v string) error {
	switch {
	case v == "":
		c.Engine = EngineSQLite
	case strings.HasPrefix(v, "postgres://") || strings.HasPrefix(v, "postgresql://"):
		if _, err := url.Parse(v); err != nil {
			return errors.New("use a URL such as postgres://user:password@host:5432/threadflow?sslmode=disable")
		}
		c.Engine, c.DatabaseURL = EnginePostgres, v
	default:
		return errors.New("use a postgres:// or postgresql:// URL, or leave it empty to use SQLite under THREADFLOW_HOME")
	}
	return nil
}

func parseLevel(v string) (zapcore.Level, error) {
	if err := oneOf(v, "debug", "info", "warn", "error"); err != nil {
		return 0, err
	}
	return zapcore.ParseLevel(v)
}

// parseLogFormat defaults to console for a person at a terminal and json for a log collector.
func parseLogFormat(v string, h hostInfo) (string, error) {
	if v == "" {
		if h.stderrTTY {
			return "console", nil
		}
		return "json", nil
	}
	return v, oneOf(v, "json", "console")
}

func oneOf(v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	shown := make([]string, 0, len(allowed))
	for _, a := range allowed {
		if a == "" {
			a = "empty"
		}
		shown = append(shown, a)
	}
	return fmt.Errorf("use one of %s", strings.Join(shown, ", "))
}

func checkHostPort(v string) error {
	_, port, err := net.SplitHostPort(v)
	if err == nil {
		_, err = strconv.ParseUint(port, 10, 16)
	}
	if err != nil {
		return errors.New("use host:port such as 127.0.0.1:8080, or 0.0.0.0:8080 to listen on every interface")
	}
	return nil
}

func parseDuration(v string, minimum time.Duration) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < minimum {
		return 0, fmt.Errorf("use a duration of at least %s, such as 30s or 2m", minimum)
	}
	return d, nil
}

// minRetention is the shortest retention: the pruner looks once an hour.
const minRetention = time.Hour

// parseRetention reads a retention: a number of days (90d), a duration of at least an hour (720h),
// or off (also 0): keep forever, returned as 0.
func parseRetention(v string) (time.Duration, error) {
	bad := errors.New("use a number of days such as 90d, a duration of at least 1h such as 720h, or off to keep runs forever")
	switch strings.ToLower(v) {
	case "off", "0":
		return 0, nil
	}
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 1 || n > 100*365 {
			return 0, bad
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < minRetention {
		return 0, bad
	}
	return d, nil
}

// maxArgsBytesCeiling bounds MAX_ARGS_BYTES: a shell node receives $ARGUMENTS as one environment
// variable, and Linux refuses to start a process with one longer than 128 KiB.
const maxArgsBytesCeiling = 100_000

// parseByteSize reads a size such as 16KB, 256MB or 1GiB (KB = 1000 bytes, KiB = 1024), or a plain
// number of bytes.
func parseByteSize(v string, minimum, maximum int64) (int64, error) {
	n, err := humanize.ParseBytes(v)
	if err != nil || n < uint64(minimum) || n > uint64(maximum) {
		return 0, fmt.Errorf("use a size from %s to %s, such as 16KB or 64KiB (KB = 1000 bytes, KiB = 1024)",
			humanize.Bytes(uint64(minimum)), humanize.Bytes(uint64(maximum)))
	}
	return int64(n), nil
}

func parseInt(v string, minimum int) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < minimum {
		return 0, fmt.Errorf("use a whole number of at least %d", minimum)
	}
	return n, nil
}

// parseSize reads a size such as 256MB (SI units), 1GiB (binary units) or 0.
func parseSize(v string) (uint64, error) {
	n, err := humanize.ParseBytes(v)
	if err != nil {
		return 0, errors.New("use a size such as 256MB, 1GiB or 0 (off)")
	}
	return n, nil
}

// parseDirs splits a colon-separated directory list; every entry must be an existing directory,
// so a typo is caught at start-up rather than as "workflow not found" in chat.
func parseDirs(v string) ([]string, error) {
	return splitList(v, ":", func(d string) error {
		if err := checkDir(d); err != nil {
			return fmt.Errorf("%q: %w", d, err)
		}
		return nil
	})
}

// splitList splits v at sep into its trimmed, non-empty entries, or returns the error check gives
// the first entry it refuses.
func splitList(v, sep string, check func(entry string) error) ([]string, error) {
	var out []string
	for _, e := range strings.Split(v, sep) {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		if err := check(e); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// checkRepo accepts an existing git repository: REPO_PATH's worktrees are made with git, and a
// directory git does not know would fail every run instead of the start.
func checkRepo(v string) error {
	if err := checkDir(v); err != nil || v == "" {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "-C", v, "rev-parse", "--git-dir").CombinedOutput()
	if err != nil {
		return fmt.Errorf("use a git repository (git rev-parse says: %s); run git init there, or leave REPO_PATH empty",
			strings.TrimSpace(cmp.Or(string(out), err.Error())))
	}
	return nil
}

// checkRemoteSyntax accepts what git takes as a remote: a URL, scp-like user@host:path, or a path.
// Whether it answers is checked when a server starts (execution.Dirs.CheckRemote).
func checkRemoteSyntax(v string) error {
	switch {
	case v == "":
		return nil
	case len(v) > 2048:
		return errors.New("is longer than 2048 bytes: use a shorter URL or path")
	case strings.ContainsAny(v, " \t\n\r\x00"):
		return errors.New("contains white space or control characters: use a git URL or a repository path")
	case strings.HasPrefix(v, "-"):
		return errors.New("starts with '-': use a git URL or a repository path")
	}
	return nil
}

func checkDir(v string) error {
	if v == "" {
		return nil
	}
	if fi, err := os.Stat(v); err != nil || !fi.IsDir() {
		return errors.New("use an existing directory")
	}
	return nil
}

// userIDPattern is a platform-qualified user id: the platform, a colon, and an id without spaces
// or separators.
var userIDPattern = regexp.MustCompile(`^(` + strings.Join(platform.Names(), "|") + `):[A-Za-z0-9._@-]+$`)

func parseUserIDs(v string) ([]string, error) {
	return splitList(v, ",", func(id string) error {
		if !userIDPattern.MatchString(id) {
			return fmt.Errorf("%q is not a platform-qualified user id; use comma-separated ids such as slack:U123,discord:4567,console:alice", id)
		}
		return nil
	})
}

func hasPrefix(v, prefix, what string) error {
	if v != "" && (!strings.HasPrefix(v, prefix) || len(v) == len(prefix)) {
		return fmt.Errorf("use %s, which starts with %s", what, prefix)
	}
	return nil
}

func checkAPIURL(v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("use an http:// or https:// URL, or leave it empty for the real API")
	}
	return nil
}

var snowflakePattern = regexp.MustCompile(`^[0-9]{1,20}$`)

func checkSnowflake(v string) error {
	if v != "" && !snowflakePattern.MatchString(v) {
		return errors.New("use a numeric Discord id such as 123456789012345678")
	}
	return nil
}

func parseSnowflakes(v string) ([]string, error) {
	return splitList(v, ",", func(id string) error {
		if err := checkSnowflake(id); err != nil {
			return fmt.Errorf("%q: use comma-separated numeric Discord ids", id)
		}
		return nil
	})
}

// checkToken accepts a short name without whitespace or control characters.
func checkToken(v string, maxLen int) error {
	if len(v) > maxLen || strings.IndexFunc(v, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return fmt.Errorf("use at most %d characters without spaces", maxLen)
	}
	return nil
}
