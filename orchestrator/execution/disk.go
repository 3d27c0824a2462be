package execution

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/dustin/go-humanize"
)

// DiskGuard watches the free space of the file system holding THREADFLOW_HOME, where node outputs,
// working directories and (on SQLite) the database live. Below MinFree a replica claims no new run
// (one that started there would likely fill the disk and fail to record itself), /readyz says why,
// and a node attempt that fails meanwhile is blamed on the disk rather than on the node.
type DiskGuard struct {
	Dir     string // THREADFLOW_HOME
	MinFree uint64 // MIN_FREE_DISK in bytes; 0 turns the guard off
}

// reserveSize is the space the bot keeps for itself in THREADFLOW_HOME (the file reserveName): when
// the disk fills up, releasing it lets the bot still record what happened (a SQLite database on the
// same disk needs a few pages for the pause and its event) instead of leaving the run stuck.
const (
	reserveSize = 4 << 20
	reserveName = ".threadflow-reserve"
)

// LowDiskError says the disk is fuller than MIN_FREE_DISK allows.
type LowDiskError struct {
	Dir           string
	Free, MinFree uint64
}

func (e *LowDiskError) Error() string {
	return fmt.Sprintf("only %s free on the disk holding %s, less than MIN_FREE_DISK (%s)",
		humanize.IBytes(e.Free), e.Dir, humanize.IBytes(e.MinFree))
}

// free returns the bytes an unprivileged process may still use on the guarded disk.
func (g DiskGuard) free() (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(g.Dir, &st); err != nil {
		return 0, fmt.Errorf("cannot read the free space of %s: %w", g.Dir, err)
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// Check returns a *LowDiskError when less than MinFree is available to the bot, nil otherwise. A
// file system that cannot be inspected is reported as is: the bot cannot tell that it is safe.
func (g DiskGuard) Check() error {
	if g.MinFree == 0 || g.Dir == "" {
		return nil
	}
	free, err := g.free()
	if err != nil {
		return err
	}
	if free < g.MinFree {
		return &LowDiskError{Dir: g.Dir, Free: free, MinFree: g.MinFree}
	}
	return nil
}

// ensureReserve creates the reserve file when it is missing and the disk has room for it beyond
// MinFree, so keeping it never stops claims by itself. It is rewritten with zeros (not a sparse
// file) so the space is really taken.
func (g DiskGuard) ensureReserve() error {
	if g.MinFree == 0 || g.Dir == "" {
		return nil
	}
	path := filepath.Join(g.Dir, reserveName)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if free, err := g.free(); err != nil || free < g.MinFree+reserveSize {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, make([]byte, reserveSize), 0o600); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("keep %d bytes in reserve in %s: %w", reserveSize, g.Dir, err)
	}
	return os.Rename(tmp, path)
}

// releaseReserve deletes the reserve file, if there is one, and reports whether it did: the disk
// is full and the bot needs the space to record it.
func (g DiskGuard) releaseReserve() bool {
	if g.Dir == "" {
		return false
	}
	return os.Remove(filepath.Join(g.Dir, reserveName)) == nil
}
