// Package fakestate is the on-disk contract between agenttest.Script (the test's side) and the fake
// CLI (the process's side): which files live in the state directory, what they hold, and the lock
// that keeps concurrent fake processes and the test from tearing each other's writes.
package fakestate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// DirEnv names the environment variable that points the fake at its state directory.
const DirEnv = "FAKE_AGENT_DIR"

// File names inside the state directory.
const (
	callsFile   = "calls.jsonl"
	expiredFile = "expired.txt"
	replyFile   = "reply.txt"
	costFile    = "cost.txt"
	failFile    = "fail.json"
	hungFile    = "hung.pids"
	lockFile    = "lock"
)

// Record is one invocation of the fake. The prompt is kept as bytes so that invalid UTF-8 survives
// the JSON round trip unchanged.
type Record struct {
	Flavor        string   `json:"flavor"`
	Args          []string `json:"args"`
	ResumeSession string   `json:"resume_session,omitempty"`
	Prompt        []byte   `json:"prompt"`
	Dir           string   `json:"dir"`
}

// Failure says that the next N calls fail with Kind.
type Failure struct {
	Kind string `json:"kind"`
	N    int    `json:"n"`
}

// Dir is a state directory.
type Dir string

func (d Dir) path(name string) string { return filepath.Join(string(d), name) }

// Locked runs fn holding an exclusive lock on the directory.
func (d Dir) Locked(fn func() error) error {
	f, err := os.OpenFile(d.path(lockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("open lock: %w", err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", d, err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing the file unlocks too
	return fn()
}

// AppendCall records one invocation as a JSON line.
func (d Dir) AppendCall(r Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return d.appendLine(callsFile, string(b))
}

// Calls returns every recorded invocation in order.
func (d Dir) Calls() ([]Record, error) {
	var out []Record
	err := d.eachLine(callsFile, func(line string) error {
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return fmt.Errorf("parse %s: %w", callsFile, err)
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

// Expire marks a session id as stale.
func (d Dir) Expire(id string) error { return d.appendLine(expiredFile, id) }

// Expired reports whether id was marked stale.
func (d Dir) Expired(id string) (bool, error) {
	found := false
	err := d.eachLine(expiredFile, func(line string) error {
		found = found || line == id
		return nil
	})
	return found, err
}

// SetReply sets the reply text; empty restores the default.
func (d Dir) SetReply(text string) error { return os.WriteFile(d.path(replyFile), []byte(text), 0o600) }

// Reply returns the reply text, or "" when none is set.
func (d Dir) Reply() (string, error) {
	b, err := os.ReadFile(d.path(replyFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return string(b), err
}

// SetCost sets the cost the fake's Claude flavor reports for each turn, as raw JSON (a number, or
// a string such as "NaN"); empty reports no usage at all.
func (d Dir) SetCost(raw string) error { return os.WriteFile(d.path(costFile), []byte(raw), 0o600) }

// Cost returns the cost set, or "" when none is.
func (d Dir) Cost() (string, error) {
	b, err := os.ReadFile(d.path(costFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return string(b), err
}

// SetFailure replaces the pending failures.
func (d Dir) SetFailure(f Failure) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return os.WriteFile(d.path(failFile), b, 0o600)
}

// TakeFailure consumes one pending failure and returns its kind, or "" when none is pending.
func (d Dir) TakeFailure() (string, error) {
	b, err := os.ReadFile(d.path(failFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var f Failure
	if err := json.Unmarshal(b, &f); err != nil {
		return "", fmt.Errorf("parse %s: %w", failFile, err)
	}
	if f.N <= 0 {
		return "", nil
	}
	f.N--
	return f.Kind, d.SetFailure(f)
}

// AddHung records the pids of a fake parked by a "hang" failure.
func (d Dir) AddHung(pids ...int) error {
	for _, pid := range pids {
		if err := d.appendLine(hungFile, strconv.Itoa(pid)); err != nil {
			return err
		}
	}
	return nil
}

// Hung returns every pid recorded by AddHung.
func (d Dir) Hung() ([]int, error) {
	var pids []int
	err := d.eachLine(hungFile, func(line string) error {
		pid, err := strconv.Atoi(line)
		pids = append(pids, pid)
		return err
	})
	return pids, err
}

// appendLine appends with O_APPEND and a single write, so concurrent writers never interleave.
func (d Dir) appendLine(name, line string) error {
	if strings.ContainsRune(line, '\n') {
		return fmt.Errorf("%s: line contains a newline", name)
	}
	f, err := os.OpenFile(d.path(name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (d Dir) eachLine(name string, fn func(string) error) error {
	b, err := os.ReadFile(d.path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, len(b)+1)
	for sc.Scan() {
		if err := fn(sc.Text()); err != nil {
			return err
		}
	}
	return sc.Err()
}
