package workflow

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Origin says where a catalog's workflow came from: OriginBundled, or the directory it was read from.
type Origin string

// OriginBundled marks the workflows embedded in the binary.
const OriginBundled Origin = "bundled"

// Catalog is the set of workflows a bot can run, by name.
type Catalog struct {
	byName map[string]entry
	broken map[string]Errors // problems of files left out, by the file's name without .yaml
}

type entry struct {
	wf     *Workflow
	origin Origin
}

// Discover loads the bundled workflows, then $home/workflows/, then each of dirs in order; a later
// workflow with the same name replaces an earlier one, so users can override the bundled ones.
// Every *.yaml and *.yml file is a workflow; a directory ending in .archon/workflows is read in
// Archon's dialect, with its subfolders (docs/archon.md). Invalid files are reported in the returned Errors and
// left out; valid ones are still usable. Missing directories are not an error. An empty home skips
// $home/workflows/.
func Discover(home string, dirs []string) (*Catalog, Errors) {
	c := &Catalog{byName: map[string]entry{}}
	errs := c.load(Bundled(), "bundled", OriginBundled)
	if home != "" {
		dirs = append([]string{filepath.Join(home, "workflows")}, dirs...)
	}
	for _, dir := range dirs {
		if IsArchonDir(dir) {
			errs = append(errs, c.loadArchon(os.DirFS(filepath.Dir(dir)), dir, Origin(dir))...)
			continue
		}
		errs = append(errs, c.load(os.DirFS(dir), dir, Origin(dir))...)
	}
	c.recordBroken(errs)
	return c, errs
}

// recordBroken remembers which files were left out and why, so that running one by its file name
// answers with its problems instead of "there is no such workflow".
func (c *Catalog) recordBroken(errs Errors) {
	for _, e := range errs {
		base := filepath.Base(e.File)
		if !isWorkflowFile(base) {
			continue // a directory that could not be read
		}
		stem := strings.TrimSuffix(strings.TrimSuffix(base, ".yaml"), ".yml")
		if c.broken == nil {
			c.broken = map[string]Errors{}
		}
		c.broken[stem] = append(c.broken[stem], e)
	}
}

// Problems returns why the file named name (name.yaml or name.yml) was left out of the catalog,
// or nil when no such file failed. A valid workflow of the same name elsewhere still runs.
func (c *Catalog) Problems(name string) Errors {
	return c.broken[name]
}

// load adds the workflows of one directory. label is the directory as shown in messages.
func (c *Catalog) load(fsys fs.FS, label string, origin Origin) Errors {
	entries, err := fs.ReadDir(fsys, ".")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return Errors{{File: label, Msg: fmt.Sprintf("cannot read workflow directory: %v; fix its permissions or remove it from the configuration", err)}}
	}
	var errs Errors
	fileOf := map[string]string{} // workflow name -> file, within this directory
	for _, e := range entries {
		if e.IsDir() || !isWorkflowFile(e.Name()) {
			continue
		}
		file := path.Join(label, e.Name())
		if origin != OriginBundled {
			file = filepath.Join(label, e.Name())
		}
		w, err := parseFS(fsys, e.Name(), file)
		if err != nil {
			errs = append(errs, asErrors(err, file)...)
			continue
		}
		if prev, dup := fileOf[w.Name]; dup {
			errs = append(errs, &Error{File: file, Line: 1, Col: 1, Msg: fmt.Sprintf(
				"workflow `%s` is also defined in %s; this file is used because it sorts later; rename one of them", w.Name, prev)})
		}
		fileOf[w.Name] = file
		c.byName[w.Name] = entry{wf: w, origin: origin}
	}
	return errs
}

func isWorkflowFile(name string) bool {
	return strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")
}

func parseFS(fsys fs.FS, name, file string) (*Workflow, error) {
	src, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	return Parse(file, src)
}

// asErrors keeps validation problems as they are and wraps an I/O failure as one Error.
func asErrors(err error, file string) Errors {
	var es Errors
	if errors.As(err, &es) {
		return es
	}
	return Errors{{File: file, Msg: fmt.Sprintf("cannot read workflow file: %v", err)}}
}

// Get returns the workflow with the given name.
func (c *Catalog) Get(name string) (*Workflow, bool) {
	e, ok := c.byName[name]
	return e.wf, ok
}

// Names returns every workflow name, sorted.
func (c *Catalog) Names() []string {
	names := make([]string, 0, len(c.byName))
	for n := range c.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// List returns every workflow, sorted by name.
func (c *Catalog) List() []*Workflow {
	out := make([]*Workflow, 0, len(c.byName))
	for _, n := range c.Names() {
		out = append(out, c.byName[n].wf)
	}
	return out
}

// Origin returns where the named workflow came from, or "" when there is no such workflow.
func (c *Catalog) Origin(name string) Origin {
	return c.byName[name].origin
}
