package agenttest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
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
