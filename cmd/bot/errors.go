package main

import (
	"errors"
	"fmt"
)

// errUsage marks mistakes in how the bot was invoked or configured: an unknown subcommand, a bad
// flag, an invalid setting. They exit with status 2 so a script can tell "fix your configuration"
// from "the bot failed" (status 1).
var errUsage = errors.New("usage error")

// usageError is a usage mistake described by one sentence.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// Is makes usageError match errUsage.
func (e *usageError) Is(target error) bool { return target == errUsage }

// settingError is a setting whose value is not accepted. It names the setting the way the user
// gave it (the environment variable or the flag) and says what would be accepted. The value of a
// secret setting is never shown.
type settingError struct {
	Name     string // DATABASE_URL or -log-level
	Value    string // as given, already redacted where it may hold a password
	Secret   bool   // the value is hidden
	Accepted string // what to use instead
}

func (e *settingError) Error() string {
	if e.Secret {
		return fmt.Sprintf("%s (value hidden) is not valid; %s", e.Name, e.Accepted)
	}
	return fmt.Sprintf("%s=%q is not valid; %s", e.Name, e.Value, e.Accepted)
}

// Is makes settingError match errUsage.
func (e *settingError) Is(target error) bool { return target == errUsage }

// exitCoder is an error that chooses its own exit status, for commands whose status carries a
// result (a workflow that failed rather than a bot that failed).
type exitCoder interface {
	error
	ExitCode() int
}

// exitCode maps run's result to the process exit status: 0 on success, 2 for usage and
// configuration mistakes, an exitCoder's own status, and 1 for everything else.
func exitCode(err error) int {
	var ec exitCoder
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ec):
		return ec.ExitCode()
	case errors.Is(err, errUsage):
		return 2
	default:
		return 1
	}
}
