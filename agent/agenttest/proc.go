package agenttest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Alive reports whether pid is a running process. A zombie (dead, waiting to be reaped) is not
// alive: a killed grandchild reparented to a container's init may stay a zombie indefinitely.
func Alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// The format is "pid (comm) state ..."; comm may itself contain parentheses.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// ReadPid returns the pid a test's process wrote to the file at path (`echo $$ > pid`), or 0 while
// the file is not there or not yet whole.
func ReadPid(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}
