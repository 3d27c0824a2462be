// Package proctag finds and kills the processes the bot started, wherever they went. A process the
// bot starts carries a tag in its environment (NAME=VALUE), which every descendant inherits unless
// it clears its environment. Killing a process group misses what moved to another session or group
// (Claude Code starts hook commands with setsid; a shell script may run `setsid` or daemonize), and
// what a crashed bot left behind; the tag finds them all in /proc.
//
// Two tags exist: THREADFLOW_RUN_ID on everything a run's nodes start, so a worker taking over a
// crashed run can stop its strays (execution.Strays), and THREADFLOW_AGENT_TURN on everything
// one agent turn starts, so the turn's end (success, timeout, cancel, shutdown, lease loss) kills
// exactly that turn's processes and not those of a parallel node of the same run.
//
// Only processes on this host, of this user or readable by it, can be found.
package proctag

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// The tags.
const (
	RunEnv  = "THREADFLOW_RUN_ID"
	TurnEnv = "THREADFLOW_AGENT_TURN"
)

// Entry is the environment entry NAME=VALUE.
func Entry(name, value string) string { return name + "=" + value }

// NewTurn returns a fresh THREADFLOW_AGENT_TURN value.
func NewTurn() string { return rand.Text() }

// Scan maps each value of tag name to the live processes (other than this one) carrying it.
func Scan(name string) map[string][]int {
	byValue := map[string][]int{}
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return byValue
	}
	self := os.Getpid()
	prefix := []byte(name + "=")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if err != nil { // gone, or another user's
			continue
		}
		if v, ok := EnvValue(env, prefix); ok && !Zombie(pid) {
			byValue[v] = append(byValue[v], pid)
		}
	}
	return byValue
}

// Kill sends SIGKILL to each of pids that still carries entry, and to its process group, and
// returns how many it killed. The tag is read again just before the kill, so a process id reused
// since a scan is never hit.
func Kill(pids []int, entry string) []int {
	marker := []byte(entry)
	var killed []int
	for _, pid := range pids {
		if !Tagged(pid, marker) {
			continue
		}
		if pgid, err := syscall.Getpgid(pid); err == nil && pgid > 1 && pgid != syscall.Getpgrp() {
			_ = syscall.Kill(-pgid, syscall.SIGKILL) // what it started in its group
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed = append(killed, pid)
		}
	}
	return killed
}

// KillAll kills every process carrying NAME=VALUE, scanning /proc until none is left (a process
// may fork while it is being killed), and returns the pids it killed.
func KillAll(name, value string) []int {
	var all []int
	for range 5 {
		pids := Scan(name)[value]
		if len(pids) == 0 {
			break
		}
		all = append(all, Kill(pids, Entry(name, value))...)
	}
	return all
}

// Tagged reports whether pid is alive and its environment holds exactly marker.
func Tagged(pid int, marker []byte) bool {
	env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil || Zombie(pid) {
		return false
	}
	for entry := range bytes.SplitSeq(env, []byte{0}) {
		if bytes.Equal(entry, marker) {
			return true
		}
	}
	return false
}

// EnvValue returns the value of the entry that starts with prefix ("NAME=") in the NUL-separated
// environment block env.
func EnvValue(env, prefix []byte) (string, bool) {
	for entry := range bytes.SplitSeq(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(entry, prefix); ok {
			return string(v), true
		}
	}
	return "", false
}

// Zombie reports whether the process is gone or has exited and only awaits reaping (state Z or X
// in /proc/PID/stat).
func Zombie(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	// The state follows the command name, which is in parentheses and may itself contain ") ".
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return true
	}
	return stat[i+2] == 'Z' || stat[i+2] == 'X'
}
