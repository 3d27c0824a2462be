package workflow

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"
)

// The bot re-reads its workflow directories every 2 seconds. An Archon repository is dozens of
// files whose command files are frozen into each (~100 ms of YAML work for Archon's own), so a
// repository whose files did not change since the last reading is not translated again: its
// workflows and problems are reused. Changed is decided by every file the translation may read
// (workflows, commands, scripts, config), by name, size and modification time.

// archonLoaded is what one reading of an Archon repository produced.
type archonLoaded struct {
	fingerprint string
	workflows   []*Workflow // in file order
	errs        Errors
}

var (
	archonCacheMu sync.Mutex
	archonCache   = map[string]archonLoaded{} // by the workflows directory as configured
)

// archonFingerprint names every file below .archon that a translation may read, with its size and
// modification time, within the depth Archon reads each directory at.
func archonFingerprint(fsys fs.FS) (string, error) {
	var b strings.Builder
	for _, dir := range []string{"workflows", "commands", "scripts"} {
		if err := fingerprintDir(fsys, dir, 0, &b); err != nil {
			return "", err
		}
	}
	if info, err := fs.Stat(fsys, "config.yaml"); err == nil {
		fmt.Fprintf(&b, "config.yaml %d %d\n", info.Size(), info.ModTime().UnixNano())
	}
	return b.String(), nil
}

func fingerprintDir(fsys fs.FS, dir string, depth int, b *strings.Builder) error {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		if depth > 0 || dir != "workflows" {
			return nil // commands/ and scripts/ may be missing; a vanished folder is seen next time
		}
		return err
	}
	for _, e := range entries {
		p := path.Join(dir, e.Name())
		if e.IsDir() {
			if depth < archonMaxDepth {
				if err := fingerprintDir(fsys, p, depth+1, b); err != nil {
					return err
				}
			}
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile: it is not read either
		}
		fmt.Fprintf(b, "%s %d %d\n", p, info.Size(), info.ModTime().UnixNano())
	}
	return nil
}
