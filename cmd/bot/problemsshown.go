package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"threadflow/workflow"
)

// problemsShownFile, in THREADFLOW_HOME, fingerprints the workflow-file problems a terminal command
// last printed in full. Every `bot workflow` and `bot chat` command reads the workflow files; with
// it, a command repeats the full list only when the problems changed, and otherwise says in one
// line that files are still left out (issue 26).
const problemsShownFile = "workflow-problems-shown"

// problemsShown is the fingerprint file of one THREADFLOW_HOME.
type problemsShown struct{ path string }

func newProblemsShown(home string) *problemsShown {
	return &problemsShown{path: filepath.Join(home, problemsShownFile)}
}

// fingerprint identifies a set of problems: files, positions and messages. No problems is "".
func fingerprint(errs workflow.Errors) string {
	if len(errs) == 0 {
		return ""
	}
	sum := sha256.Sum256([]byte(errs.Error()))
	return hex.EncodeToString(sum[:])
}

// same reports whether errs are the problems last shown in full. A missing file means none were.
func (p *problemsShown) same(errs workflow.Errors) (bool, error) {
	b, err := os.ReadFile(p.path)
	if errors.Is(err, fs.ErrNotExist) {
		return len(errs) == 0, nil
	}
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(string(b)) == fingerprint(errs), nil
}

// record remembers errs as shown in full. It replaces the file in one rename, so two commands
// starting together never read half a fingerprint.
func (p *problemsShown) record(errs workflow.Errors) error {
	fp := fingerprint(errs)
	if fp == "" {
		if err := os.Remove(p.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(p.path), problemsShownFile+".*")
	if err != nil {
		return err
	}
	_, err = tmp.WriteString(fp + "\n")
	if err = errors.Join(err, tmp.Close()); err == nil {
		err = os.Rename(tmp.Name(), p.path)
	}
	if err != nil {
		return errors.Join(err, os.Remove(tmp.Name()))
	}
	return nil
}

// brokenFiles is how many workflow files (or unreadable directories) errs are about.
func brokenFiles(errs workflow.Errors) int {
	files := map[string]bool{}
	for _, e := range errs {
		files[e.File] = true
	}
	return len(files)
}

// problemsReminder is the one line a terminal command prints instead of problems already shown.
func problemsReminder(errs workflow.Errors) string {
	n := brokenFiles(errs)
	if n == 1 {
		return "1 workflow file is not valid and is left out; bot workflow validate shows why."
	}
	return fmt.Sprintf("%d workflow files are not valid and are left out; bot workflow validate shows why.", n)
}
