package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// defaultHome is THREADFLOW_HOME when it is unset: one directory per user, not per working
// directory, so every command finds the same runs wherever it is run, as the XDG base directory
// specification places user data: $XDG_DATA_HOME/threadflow, else ~/.local/share/threadflow. HOME is
// read through getenv, as os.UserHomeDir reads it on Unix, so tests choose it. "" when neither is
// an absolute path: Config.check then asks for THREADFLOW_HOME.
func defaultHome(getenv func(string) string) string {
	if d := getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "threadflow")
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "share", "threadflow")
	}
	return ""
}

// legacyHome is where THREADFLOW_HOME was by default before it was per user: the working
// directory's .threadflow, so a command run elsewhere silently opened another, empty database.
const legacyHome = ".threadflow"

// setHome reads THREADFLOW_HOME, made absolute: run directories and output files are recorded
// with the home's path, which must mean the same from every directory.
func (c *Config) setHome(v string, h hostInfo) error {
	if v == "" {
		v, c.HomeDefault = h.defaultHome, true
		if v == "" {
			return nil // check says what to set
		}
	}
	abs, err := filepath.Abs(v)
	if err != nil {
		return fmt.Errorf("use a directory path: %v", err)
	}
	c.Home = abs
	return nil
}

// announceHome tells the person at the terminal, on w (stderr), what they could not otherwise
// see: that this command is creating a new database, and where; and that a database in the
// working directory's .threadflow, the default home of earlier versions, is not the one in use.
// It runs before the store is opened, which creates the database file.
func announceHome(w io.Writer, c Config) error {
	if c.Engine != EngineSQLite {
		return nil // PostgreSQL databases are created by their operator
	}
	if c.HomeDefault {
		old, err := filepath.Abs(filepath.Join(legacyHome, "threadflow.db"))
		if err != nil {
			return err
		}
		if _, err := os.Stat(old); err == nil && old != c.SQLitePath() {
			fmt.Fprintf(w, "The database in %s is not used: runs are kept in %s, wherever a command runs, unless THREADFLOW_HOME says otherwise. "+
				"To use that one, set THREADFLOW_HOME=%s\n", old, c.Home, filepath.Dir(old))
		}
	}
	_, err := os.Stat(c.SQLitePath())
	switch {
	case errors.Is(err, fs.ErrNotExist) && c.HomeDefault:
		fmt.Fprintf(w, "New database %s: THREADFLOW_HOME is unset, so runs are kept in %s, wherever a command runs; set THREADFLOW_HOME to keep them elsewhere.\n",
			c.SQLitePath(), c.Home)
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(w, "New database %s (THREADFLOW_HOME=%s).\n", c.SQLitePath(), c.Home)
	case err != nil:
		return fmt.Errorf("look for the database %s: %w", c.SQLitePath(), err)
	}
	return nil
}
