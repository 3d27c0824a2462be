package execution

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The second node's output file is the spare made while the first ran (the same inode), an
// existing file is truncated as before, and close leaves no spare behind.
func TestOutputFilesUseTheSpareAndLeaveNothing(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "outputs")
	o := newOutputFiles(dir, 3)
	first, err := o.create(filepath.Join(dir, "a.attempt-1.out"))
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	spare := waitForSpare(t, o, dir)
	spareInode := inode(t, spare)

	target := filepath.Join(dir, "b.attempt-1.out")
	if err := os.WriteFile(target, []byte("an earlier attempt's output"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := o.create(target)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("new"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "an earlier attempt's output" {
		t.Errorf("b's path holds %q before the file is named; want the earlier attempt's file, untouched", b)
	}
	f.name()
	if f.nameErr != nil {
		t.Fatal(f.nameErr)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Errorf("b's path holds %q once named; want what was written to the spare", b)
	}
	if _, err := f.WriteString(" and more"); err != nil {
		t.Fatal(err)
	}
	out, err := f.finish()
	if err != nil || out.Text != "new and more" || out.Bytes != 12 || out.File != target {
		t.Errorf("finish = %+v, %v; want the whole output, read through the open file, at b's path", out, err)
	}
	if got := inode(t, target); got != spareInode {
		t.Errorf("b's file is inode %d; want the spare's %d (renamed, not created)", got, spareInode)
	}
	if b, _ := os.ReadFile(target); string(b) != "new and more" {
		t.Errorf("b's file holds %q; want only what was written after create", b)
	}
	if st, err := os.Stat(target); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("b's file mode = %v, %v; want 0644", st.Mode().Perm(), err)
	}

	waitForSpare(t, o, dir) // the maker replaced the spare it gave away
	o.close()
	if spares, _ := filepath.Glob(filepath.Join(dir, ".spare-*")); len(spares) != 0 {
		t.Errorf("spares left after close: %v", spares)
	}
	if _, err := o.create(filepath.Join(dir, "c.attempt-1.out")); err != nil {
		t.Errorf("create after close: %v; want a file created directly", err)
	}
	if spares, _ := filepath.Glob(filepath.Join(dir, ".spare-*")); len(spares) != 0 {
		t.Errorf("a spare was made after close: %v", spares)
	}
}

// A one-node run makes no spare.
func TestOutputFilesOfOneNodeMakeNoSpare(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "outputs")
	o := newOutputFiles(dir, 1)
	f, err := o.create(filepath.Join(dir, "only.attempt-1.out"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	o.close()
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("outputs dir holds %d entries; want only the node's file", len(entries))
	}
}

// waitForSpare waits until o holds a spare ready to be taken, and returns its path. Ready, not just
// on disk: the maker creates the file before it hands the name over, and a create in between
// rightly makes a file of its own.
func waitForSpare(t *testing.T, o *outputFiles, dir string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if len(o.ready) == 1 {
			if spares, _ := filepath.Glob(filepath.Join(dir, ".spare-*")); len(spares) == 1 {
				return spares[0]
			}
		}
		time.Sleep(time.Millisecond) // polling interval of the deadline above
	}
	t.Fatal("no spare was ready within 10s")
	return ""
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}
