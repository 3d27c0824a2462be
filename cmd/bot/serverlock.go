package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// serverLock is held by a server (bot serve) on its SQLite database for as long as it runs. Two
// servers on one SQLite file would both answer Slack and Discord and race for the same runs, and
// SQLite serialises their writes anyway: several replicas need PostgreSQL. Terminal commands
// (chat, workflow) take no server lock; they are meant to work next to a server.
//
// It is not the migration lock (<db>.migrate-lock, held only while migrating): this one lives as
// long as the server, and holds the server's pid so the refusal can name the process.
type serverLock struct{ f *os.File }

// lockServer takes the lock file <db>.server-lock without waiting; the kernel releases it when
// the process exits, however it exits, so a crashed server never leaves a stale lock.
func lockServer(dbPath string) (*serverLock, error) {
	if abs, err := filepath.Abs(dbPath); err == nil {
		dbPath = abs // the refusal names the file the other server uses, wherever it was started
	}
	path := dbPath + ".server-lock"
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("server lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		pid := readPID(f)
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("another Threadflow server (pid %s) already serves the SQLite database %s (lock file %s); "+
				"stop that one first, or give this one its own THREADFLOW_HOME; several replicas on one database need PostgreSQL (DATABASE_URL)",
				pid, dbPath, path)
		}
		return nil, fmt.Errorf("server lock %s: %w", path, err)
	}
	if err := writePID(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("server lock %s: %w", path, err)
	}
	return &serverLock{f: f}, nil
}

func readPID(f *os.File) string {
	buf := make([]byte, 32)
	n, err := f.ReadAt(buf, 0) // io.EOF: the pid is shorter than buf
	if err != nil && !errors.Is(err, io.EOF) {
		return "unknown" // a lock file whose pid cannot be read is still a lock
	}
	if pid := strings.TrimSpace(string(buf[:n])); pid != "" {
		if _, err := strconv.Atoi(pid); err == nil {
			return pid
		}
	}
	return "unknown"
}

func writePID(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// release drops the lock; the file stays, empty of meaning until the next server takes it.
func (l *serverLock) release() error {
	if l == nil {
		return nil
	}
	return l.f.Close()
}
