package workflow

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Archon's DAG-mode workflow files (github.com/coleam00/Archon) load unchanged: a WORKFLOWS_DIR
// entry that ends in .archon/workflows is read in Archon's dialect, with the command files,
// scripts and config beside it (docs/archon.md). Each file is translated onto our nodes by the
// same decoder as our own files, so messages point at the Archon file's line and column; what has
// no faithful translation is refused by field, line and reason, never ignored.

// DialectArchon is Workflow.Dialect for a file of Archon's dialect.
const DialectArchon = "archon"

// archonKey is the top-level key under which a loaded Archon file carries what it read from beside
// it (command files, included workflows, config). It is appended to the file's own text, so the
// frozen source of a run is complete: a resumed run uses the commands it started with, even when
// the repository has changed since.
const archonKey = "x-threadflow-archon"

// archonMaxDepth is how deep Archon looks for workflow files below .archon/workflows (its
// MAX_DISCOVERY_DEPTH: one level of grouping folders, like defaults/).
const archonMaxDepth = 1

// archonBundle is what a frozen Archon source carries under archonKey.
type archonBundle struct {
	Commands map[string]string       `yaml:"commands,omitempty"` // command name -> the command file's text
	Includes map[string]string       `yaml:"includes,omitempty"` // workflow name -> the included file's text
	Files    map[string]string       `yaml:"files,omitempty"`    // workflow name -> its file, for messages
	Config   archonConfig            `yaml:"config,omitempty"`
	Scripts  map[string]archonScript `yaml:"scripts,omitempty"` // named script -> its file
}

// archonScript is a named script of .archon/scripts, frozen with the run like a command file.
type archonScript struct {
	File string `yaml:"file"` // its name below .archon/scripts, whose extension says its language
	Code string `yaml:"code"`
}

// archonConfig is the part of .archon/config.yaml that changes what a workflow means.
type archonConfig struct {
	BaseBranch string                  `yaml:"base_branch,omitempty"` // worktree.baseBranch: $BASE_BRANCH
	DocsDir    string                  `yaml:"docs_dir,omitempty"`    // docs.path: $DOCS_DIR
	Tiers      map[string]archonPreset `yaml:"tiers,omitempty"`       // small, medium, large
	Aliases    map[string]archonPreset `yaml:"aliases,omitempty"`     // @name
}

// IsArchonDir reports whether a WORKFLOWS_DIR entry is an Archon repository's .archon/workflows.
func IsArchonDir(dir string) bool {
	clean := filepath.Clean(dir)
	return filepath.Base(clean) == "workflows" && filepath.Base(filepath.Dir(clean)) == ".archon"
}

// archonRepo is one .archon directory being loaded: its files, by path relative to .archon.
type archonRepo struct {
	fsys   fs.FS // rooted at .archon
	label  string
	byName map[string]string // workflow name -> path relative to .archon
	config archonConfig
	files  []string // the workflow files, relative to .archon
	// configErrs are the problems of config.yaml, reported once with the directory's files.
	configErrs Errors
}

// parseArchonFile parses a workflow file that lies in an Archon repository's .archon/workflows,
// in Archon's dialect; ok is false for any other file.
func parseArchonFile(p string) (w *Workflow, ok bool, err error) {
	abs, aerr := filepath.Abs(p)
	if aerr != nil {
		return nil, false, nil
	}
	dir := filepath.Dir(abs)
	for range archonMaxDepth + 1 {
		if IsArchonDir(dir) {
			root := filepath.Dir(dir)
			below, err := filepath.Rel(dir, abs)
			if err != nil {
				return nil, false, nil
			}
			label := strings.TrimSuffix(strings.TrimSuffix(filepath.Clean(p), below), string(filepath.Separator))
			if label == "" {
				label = "."
			}
			r, err := newArchonRepo(os.DirFS(root), label)
			if err != nil {
				return nil, true, err
			}
			w, err := r.parse("workflows/" + filepath.ToSlash(below))
			return w, true, err
		}
		dir = filepath.Dir(dir)
	}
	return nil, false, nil
}

// newArchonRepo reads the names of an Archon repository's workflows and its config.
func newArchonRepo(fsys fs.FS, label string) (*archonRepo, error) {
	files, err := archonFiles(fsys)
	if err != nil {
		return nil, err
	}
	r := &archonRepo{fsys: fsys, label: label, byName: map[string]string{}}
	r.configErrs = r.readConfig()
	for _, f := range files {
		if name := archonName(fsys, f); name != "" {
			if _, dup := r.byName[name]; !dup {
				r.byName[name] = f
			}
		}
	}
	r.files = files
	return r, nil
}

// loadArchon adds the workflows of an Archon .archon/workflows directory. fsys is rooted at the
// .archon directory; label is the workflows directory as shown in messages.
func (c *Catalog) loadArchon(fsys fs.FS, label string, origin Origin) Errors {
	fp, err := archonFingerprint(fsys)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return Errors{{File: label, Msg: fmt.Sprintf("cannot read Archon workflow directory: %v; fix its permissions or remove it from the configuration", err)}}
	}
	archonCacheMu.Lock()
	loaded, ok := archonCache[label]
	archonCacheMu.Unlock()
	if !ok || loaded.fingerprint != fp {
		loaded = readArchon(fsys, label)
		loaded.fingerprint = fp
		archonCacheMu.Lock()
		archonCache[label] = loaded
		archonCacheMu.Unlock()
	}
	for _, w := range loaded.workflows {
		c.byName[w.Name] = entry{wf: w, origin: origin}
	}
	return loaded.errs
}

// readArchon translates every workflow of an Archon repository.
func readArchon(fsys fs.FS, label string) archonLoaded {
	r, err := newArchonRepo(fsys, label)
	if err != nil {
		return archonLoaded{errs: Errors{{File: label, Msg: fmt.Sprintf("cannot read Archon workflow directory: %v; fix its permissions or remove it from the configuration", err)}}}
	}
	out := archonLoaded{errs: r.configErrs}
	fileOf := map[string]string{}
	for _, f := range r.files {
		file := r.display(f)
		w, err := r.parse(f)
		if err != nil {
			out.errs = append(out.errs, asErrors(err, file)...)
			continue
		}
		if prev, dup := fileOf[w.Name]; dup {
			out.errs = append(out.errs, &Error{File: file, Line: 1, Col: 1, Msg: fmt.Sprintf(
				"workflow `%s` is also defined in %s; this file is used because it sorts later; rename one of them", w.Name, prev)})
		}
		fileOf[w.Name] = file
		out.workflows = append(out.workflows, w)
	}
	return out
}

// display is a file below .archon as messages show it.
func (r *archonRepo) display(rel string) string {
	return filepath.Join(r.label, filepath.FromSlash(strings.TrimPrefix(rel, "workflows/")))
}

// archonFiles lists the workflow files below workflows/, as Archon discovers them: *.yaml and
// *.yml at the top and in folders archonMaxDepth deep, sorted.
func archonFiles(fsys fs.FS) ([]string, error) {
	var out []string
	var walk func(dir string, depth int) error
	walk = func(dir string, depth int) error {
		entries, err := fs.ReadDir(fsys, dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			p := path.Join(dir, e.Name())
			switch {
			case e.IsDir() && depth < archonMaxDepth:
				if err := walk(p, depth+1); err != nil {
					return err
				}
			case !e.IsDir() && isWorkflowFile(e.Name()):
				out = append(out, p)
			}
		}
		return nil
	}
	err := walk("workflows", 0)
	sort.Strings(out)
	return out, err
}

// archonName reads the `name` of a workflow file, or "" when it has none that can be read.
func archonName(fsys fs.FS, rel string) string {
	src, err := fs.ReadFile(fsys, rel)
	if err != nil || len(src) > maxSourceSize {
		return ""
	}
	var top struct {
		Name string `yaml:"name"`
	}
	if yaml.Unmarshal(src, &top) != nil {
		return ""
	}
	return top.Name
}

// readConfig reads the settings of .archon/config.yaml that change what workflows mean.
func (r *archonRepo) readConfig() Errors {
	src, err := fs.ReadFile(r.fsys, "config.yaml")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	file := filepath.Join(filepath.Dir(r.label), "config.yaml")
	if err != nil {
		return Errors{{File: file, Msg: fmt.Sprintf("cannot read Archon config: %v", err)}}
	}
	var cfg struct {
		Worktree struct {
			BaseBranch string `yaml:"baseBranch"`
		} `yaml:"worktree"`
		Docs struct {
			Path string `yaml:"path"`
		} `yaml:"docs"`
		Tiers   map[string]archonPreset `yaml:"tiers"`
		Aliases map[string]archonPreset `yaml:"aliases"`
	}
	if err := yaml.Unmarshal(src, &cfg); err != nil {
		return Errors{{File: file, Line: 1, Col: 1, Msg: fmt.Sprintf("cannot read Archon config as YAML: %v", err)}}
	}
	r.config = archonConfig{BaseBranch: cfg.Worktree.BaseBranch, DocsDir: cfg.Docs.Path, Tiers: cfg.Tiers, Aliases: cfg.Aliases}
	return nil
}

// parse reads one Archon workflow file with what it needs from beside it frozen into its source.
func (r *archonRepo) parse(rel string) (*Workflow, error) {
	file := r.display(rel)
	src, err := fs.ReadFile(r.fsys, rel)
	if err != nil {
		return nil, err
	}
	if len(src) > maxSourceSize {
		return Parse(file, src) // reports the size
	}
	if bytes.Contains(src, []byte(archonKey)) {
		return nil, Errors{{File: file, Line: 1, Col: 1, Msg: fmt.Sprintf("the file holds `%s`, which Threadflow writes itself; remove it", archonKey)}}
	}
	b := &archonBundle{Config: r.config}
	if err := r.gather(src, b, map[string]bool{}, 0); err != nil {
		return nil, err
	}
	frozen, err := freezeArchon(src, b)
	if err != nil {
		return nil, Errors{{File: file, Line: 1, Col: 1, Msg: err.Error()}}
	}
	if len(frozen) > maxSourceSize {
		return nil, Errors{{File: file, Line: 1, Col: 1, Msg: fmt.Sprintf(
			"with the command files, scripts and workflows it uses, this workflow is %d bytes; a run can keep at most %d: split it, or shorten its command files", len(frozen), maxSourceSize)}}
	}
	return parse(file, src, frozen, b)
}

// gather collects the command files and included workflows src names, recursively through
// includes. What cannot be found is left out: the decoder then says so at the field that names it.
func (r *archonRepo) gather(src []byte, b *archonBundle, seen map[string]bool, depth int) error {
	var doc struct {
		Nodes []archonRef `yaml:"nodes"`
	}
	if yaml.Unmarshal(src, &doc) != nil {
		return nil // the decoder reports it with its position
	}
	for _, n := range doc.Nodes {
		for _, name := range n.scripts() {
			if sc, ok := r.script(name); ok {
				if b.Scripts == nil {
					b.Scripts = map[string]archonScript{}
				}
				b.Scripts[name] = sc
			}
		}
		for _, name := range n.commands() {
			if text, ok := r.command(name); ok {
				if b.Commands == nil {
					b.Commands = map[string]string{}
				}
				b.Commands[name] = text
			}
		}
		if n.Include == "" || seen[n.Include] || depth >= archonIncludeDepth {
			continue
		}
		seen[n.Include] = true
		rel, ok := r.byName[n.Include]
		if !ok {
			continue
		}
		inc, err := fs.ReadFile(r.fsys, rel)
		if err != nil {
			return err
		}
		if b.Includes == nil {
			b.Includes, b.Files = map[string]string{}, map[string]string{}
		}
		b.Includes[n.Include], b.Files[n.Include] = string(inc), r.display(rel)
		if err := r.gather(inc, b, seen, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// archonRef is what gather reads of a node: the names it refers to.
type archonRef struct {
	Command   any            `yaml:"command"`
	Script    any            `yaml:"script"`
	Include   string         `yaml:"include"`
	Loop      map[string]any `yaml:"loop"`
	LoopGroup struct {
		Nodes []archonRef `yaml:"nodes"`
	} `yaml:"loop_group"`
}

func (n archonRef) commands() []string {
	var out []string
	if s, ok := n.Command.(string); ok {
		out = append(out, s)
	}
	if s, ok := n.Loop["command"].(string); ok {
		out = append(out, s)
	}
	for _, c := range n.LoopGroup.Nodes {
		out = append(out, c.commands()...)
	}
	return out
}

// scripts are the named scripts a node runs: a `script:` that is one word names a file of
// .archon/scripts; anything else is code.
func (n archonRef) scripts() []string {
	var out []string
	if s, ok := n.Script.(string); ok && archonScriptName(s) {
		out = append(out, s)
	}
	for _, c := range n.LoopGroup.Nodes {
		out = append(out, c.scripts()...)
	}
	return out
}

// archonScriptName reports whether a `script:` value names a script file rather than holding code.
func archonScriptName(s string) bool {
	return validCommandName(s) && !strings.ContainsAny(s, " \t\n;()")
}

// archonScriptExts are the extensions Archon runs named scripts by (bun: .ts, .js; uv: .py).
var archonScriptExts = []string{".ts", ".js", ".py"}

// script reads a named script as Archon finds it: NAME.ts, NAME.js or NAME.py in .archon/scripts or
// a folder one level below it.
func (r *archonRepo) script(name string) (archonScript, bool) {
	dirs := []string{"scripts"}
	entries, err := fs.ReadDir(r.fsys, "scripts")
	if err != nil {
		entries = nil // no folders of scripts: only scripts/ itself
	}
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, "scripts/"+e.Name())
		}
	}
	for _, dir := range dirs {
		for _, ext := range archonScriptExts {
			if b, err := fs.ReadFile(r.fsys, dir+"/"+name+ext); err == nil {
				return archonScript{File: strings.TrimPrefix(dir+"/"+name+ext, "scripts/"), Code: string(b)}, true
			}
		}
	}
	return archonScript{}, false
}

// command reads a command file as Archon finds it: .archon/commands/NAME.md, else NAME.md in a
// folder one level below (commands/defaults/), the first in name order.
func (r *archonRepo) command(name string) (string, bool) {
	if !validCommandName(name) {
		return "", false
	}
	if b, err := fs.ReadFile(r.fsys, "commands/"+name+".md"); err == nil {
		return string(b), true
	}
	entries, err := fs.ReadDir(r.fsys, "commands")
	if err != nil {
		return "", false // no commands directory: the decoder says which command is missing
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if b, err := fs.ReadFile(r.fsys, "commands/"+e.Name()+"/"+name+".md"); err == nil {
			return string(b), true
		}
	}
	return "", false
}

// validCommandName accepts what Archon accepts as a command name, and nothing that leaves the
// commands directory.
func validCommandName(name string) bool {
	if name == "" || len(name) > 128 || strings.HasPrefix(name, ".") {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// freezeArchon appends the bundle to the file's text under archonKey. The file's own lines keep
// their numbers, so messages about a run's frozen copy point where they did when it loaded.
func freezeArchon(src []byte, b *archonBundle) ([]byte, error) {
	if bytes.Contains(src, []byte(archonKey)) {
		return nil, fmt.Errorf("the file already holds `%s`, which Threadflow writes itself; remove it", archonKey)
	}
	extra, err := yaml.Marshal(map[string]*archonBundle{archonKey: b})
	if err != nil {
		return nil, fmt.Errorf("cannot freeze the command files this workflow uses: %w", err)
	}
	out := bytes.Clone(src)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	out = append(out, "# Added by Threadflow when the run started: what this file read from beside it.\n"...)
	return append(out, extra...), nil
}

// archonBundleOf finds and decodes the bundle of a frozen Archon source, or returns nil when root
// is one of our own files.
func (d *decoder) archonBundleOf(root *yaml.Node) *archonBundle {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != archonKey {
			continue
		}
		b := &archonBundle{}
		if err := root.Content[i+1].Decode(b); err != nil {
			d.errorf(root.Content[i+1], "`%s` is not what Threadflow wrote: %v; load the workflow from its Archon repository again", archonKey, err)
		}
		return b
	}
	return nil
}
