package execution

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// outputFiles creates the output files of one execution's nodes. While a node runs it makes one
// empty spare file in the run's outputs directory, so that the next node's file is a rename of
// the spare rather than a new inode on the path between two nodes. Why: allocating an inode is
// not cheap everywhere. On ext4 without a journal (this project's CI machines) the allocator skips
// inodes deleted in the last seconds, and a new file took 0.1-1 ms, as much as starting the
// node's process (BENCHMARKS.md, issue 18). A rename allocates nothing.
//
// The spare is made in the background, one at a time, and kept open: the node's process writes to
// the descriptor made with it, and the rename to the node's path happens once that process has
// started (outputFile.name), while it runs on the other core, not between two nodes (a rename
// leaves open descriptors as they are). A node that finds none ready creates its file directly, as
// before. A spare left by a crash is an empty hidden file (.spare-*) that nothing reads.
type outputFiles struct {
	dir   string
	ready chan spareFile // at most one spare, open for writing, ready to be renamed
	want  chan struct{}  // asks the maker for a spare
	stop  chan struct{}
	done  sync.WaitGroup
	made  int // spares made, for their names (only the maker touches it)

	mu      sync.Mutex
	started bool // the maker runs
	closed  bool // no maker may start any more
}

// newOutputFiles prepares spares only when more than one node will need a file: a one-node run
// would make a spare for nothing.
func newOutputFiles(dir string, nodes int) *outputFiles {
	o := &outputFiles{dir: dir}
	if nodes > 1 {
		o.ready, o.want, o.stop = make(chan spareFile, 1), make(chan struct{}, 1), make(chan struct{})
	}
	return o
}

// create creates (or truncates) the file at path, a file of o.dir, from a spare when one is ready,
// and asks for the next spare. A nil o creates the file directly.
func (o *outputFiles) create(path string) (*outputFile, error) {
	if o != nil {
		defer o.replenish()
		if spare, ok := o.take(); ok {
			return &outputFile{File: os.NewFile(uintptr(spare.fd), path), spare: spare.name}, nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	return &outputFile{File: f}, nil
}

// take returns a ready spare, if there is one.
func (o *outputFiles) take() (spareFile, bool) {
	select {
	case spare := <-o.ready:
		return spare, true
	default:
		return spareFile{}, false
	}
}

// outputFile is an attempt's output file, open for reading and writing. Taken from a spare, it
// still has the spare's name until name renames it to its path (f.Name()).
type outputFile struct {
	*os.File
	spare   string // the spare's name, until name has run
	nameErr error  // what name's rename said
}

// name gives the file its path, once: a spare is renamed (rename(2) itself: os.Rename first looks
// whether the target is a directory, which an attempt's file never is, and rename(2) refuses to
// put a file in place of one). A failure is kept for Close, which reports it.
func (f *outputFile) name() {
	if f.spare != "" {
		f.nameErr = syscall.Rename(f.spare, f.Name())
		f.spare = ""
	}
}

// Close names the file and closes it.
func (f *outputFile) Close() error {
	f.name()
	return errors.Join(f.nameErr, f.File.Close())
}

// replenish asks the maker, started at the first call, for one more spare.
func (o *outputFiles) replenish() {
	if o.want == nil {
		return
	}
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	if !o.started {
		o.started = true
		o.done.Add(1)
		go o.make()
	}
	o.mu.Unlock()
	select {
	case o.want <- struct{}{}:
	default: // already asked
	}
}

// make creates a spare each time one is wanted, until close.
func (o *outputFiles) make() {
	defer o.done.Done()
	for {
		select {
		case <-o.stop:
			return
		case <-o.want:
		}
		if len(o.ready) > 0 {
			continue
		}
		o.made++
		// Made as a node's file is (0644 less the umask), under a name no other process uses.
		name := filepath.Join(o.dir, fmt.Sprintf(".spare-%d-%d", os.Getpid(), o.made))
		fd, err := syscall.Open(name, syscall.O_CREAT|syscall.O_EXCL|syscall.O_RDWR|syscall.O_CLOEXEC, 0o644)
		if err != nil {
			continue // the node that wanted it creates its own file, and reports any error
		}
		o.ready <- spareFile{fd: fd, name: name} // never blocks: only this goroutine fills ready, and it was empty
	}
}

// close stops the maker and removes the spare nobody took.
func (o *outputFiles) close() {
	if o == nil || o.stop == nil {
		return
	}
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	close(o.stop)
	o.done.Wait()
	select {
	case spare := <-o.ready:
		spare.remove()
	default:
	}
}

// spareFile is a spare's open descriptor and its name. It stays a bare descriptor until taken:
// os.NewFile then names it for the path it will be renamed to.
type spareFile struct {
	fd   int
	name string
}

func (s spareFile) remove() {
	_ = os.NewFile(uintptr(s.fd), s.name).Close()
	_ = os.Remove(s.name)
}
