package workflow

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// maxSourceSize bounds a workflow file; real workflows are a few kilobytes.
const maxSourceSize = 1 << 20

var (
	topFields   = []string{"name", "description", "inputs", "access", "triggers", "concurrency", "max_cost_usd", "nodes"}
	inputFields = []string{"name", "description", "type", "choices", "default", "required", "pattern"}
)

// ParseFile reads and parses one workflow file; a file in an Archon repository's .archon/workflows
// is read in Archon's dialect, with what it uses from beside it (docs/archon.md).
func ParseFile(path string) (*Workflow, error) {
	if w, ok, err := parseArchonFile(path); ok {
		return w, err
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read workflow: %w", err)
	}
	return Parse(path, src)
}

// Parse decodes and validates a workflow. On failure the error is Errors holding every problem
// found, each as file:line:col: message. path is used in messages and kept as Workflow.Path.
func Parse(path string, src []byte) (*Workflow, error) { return parse(path, src, src, nil) }

// parse decodes text and keeps source as the workflow's Source. An Archon file being loaded passes
// its own text and the bundle it was frozen with (b), so that loading does not read the bundle back
// from YAML; a run's frozen copy (text == source, b nil) carries the bundle under archonKey.
func parse(path string, text, source []byte, b *archonBundle) (*Workflow, error) {
	d := &decoder{file: path}
	if len(source) > maxSourceSize {
		d.errorAt(1, 1, "file is %d bytes; a workflow must be under %d", len(source), maxSourceSize)
		return nil, d.errs
	}
	w := &Workflow{Path: path, Source: bytes.Clone(source)}
	text = unifyLineBreaks(text)
	root := d.document(text)
	if root == nil {
		return nil, d.errs
	}
	d.lines = strings.Split(string(text), "\n")
	if b == nil {
		b = d.archonBundleOf(root)
	}
	if b != nil {
		d.archonWorkflow(root, w, b)
	} else {
		d.workflow(root, w)
	}
	d.validateGraph(w)
	if len(d.errs) > 0 {
		d.errs.sortByPosition()
		return nil, d.errs
	}
	return w, nil
}

// document decodes the YAML text into its root mapping, or records why it cannot.
func (d *decoder) document(src []byte) (root *yaml.Node) {
	defer func() {
		// yaml.v3 has panicked on malformed input before; a hostile file must not take down the bot.
		if r := recover(); r != nil {
			d.errorAt(1, 1, "cannot read this file as YAML: %v", r)
			root = nil
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.errorAt(1, 1, "file is empty; a workflow needs at least `name` and `nodes`")
		} else {
			d.yamlError(src, err)
		}
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		d.errorAt(max(extra.Line, 1), 1, "a workflow file holds one YAML document; remove the `---` and what follows, or move it to its own file")
		return nil
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		d.errorAt(1, 1, "a workflow must be a mapping with `name` and `nodes` at the top level")
		return nil
	}
	return doc.Content[0]
}

func (d *decoder) workflow(root *yaml.Node, w *Workflow) {
	fs := d.mapping(root, "the workflow", topFields)
	if f, ok := fs["name"]; ok {
		w.Name, _ = d.id(f)
		d.wfName = w.Name
	} else {
		d.errorf(root, "missing `name`; add a line like `name: my-workflow`")
	}
	if f, ok := fs["description"]; ok {
		w.Description, _ = d.str(f)
	}
	if f, ok := fs["inputs"]; ok {
		w.Inputs = d.inputs(f)
	}
	if f, ok := fs["access"]; ok {
		w.Access = d.access(f)
	}
	if f, ok := fs["max_cost_usd"]; ok {
		w.MaxCostNanos = d.maxCost(f)
	}
	if f, ok := fs["concurrency"]; ok {
		w.Concurrency = d.concurrency(f, w.Inputs)
	}
	if f, ok := fs["triggers"]; ok {
		d.triggers(f, w)
		d.checkTriggers(w)
	}
	f, ok := fs["nodes"]
	if !ok {
		d.errorf(root, "missing `nodes`; add a list of nodes, each with an `id` and one of %s", strings.Join(kindFields, ", "))
		return
	}
	if f.val.Kind != yaml.SequenceNode || len(f.val.Content) == 0 {
		d.errorf(f.val, "`nodes` must be a non-empty list of nodes, found %s", describe(f.val))
		return
	}
	for _, n := range f.val.Content {
		if node := d.node(n); node != nil {
			w.Nodes = append(w.Nodes, node)
		}
	}
}

// yamlBreaks are the line breaks yaml.v3 counts when it reports a line (YAML 1.1: CR LF, a lone CR,
// NEL, LS and PS), written as the one break our line table splits on.
var yamlBreaks = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\u0085", "\n", "\u2028", "\n", "\u2029", "\n")

// unifyLineBreaks rewrites every line break of src as '\n', so that the lines YAML reports and the
// lines positions are computed from are the same lines. Workflow.Source keeps the original bytes.
func unifyLineBreaks(src []byte) []byte {
	if !bytes.ContainsAny(src, "\r\u0085\u2028\u2029") {
		return src
	}
	return []byte(yamlBreaks.Replace(string(src)))
}
