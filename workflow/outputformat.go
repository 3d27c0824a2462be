package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"gopkg.in/yaml.v3"
)

// maxSchemaBytes bounds an output_format schema as JSON: it is sent with every turn of its node.
const maxSchemaBytes = 64 << 10

// OutputFormat is a prompt node's `output_format`: a JSON Schema the agent's answer must match.
// The CLI is asked for a structured answer in this shape (claude --json-schema, codex
// --output-schema), and the answer is validated here whatever the CLI did, so a node's output is
// either schema-valid JSON or the node fails naming the schema error.
type OutputFormat struct {
	Schema json.RawMessage // the schema as JSON, keys as written
	Fields []string        // the top-level properties: what $node.output.<field> may read, sorted
	schema *jsonschema.Schema
}

// Validate checks an answer against the schema. The error names every place the answer is wrong.
func (o *OutputFormat) Validate(answer []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(answer))
	if err != nil {
		return fmt.Errorf("the answer is not JSON: %w", err)
	}
	return schemaError(o.schema.Validate(v))
}

// schemaError words a validation error as its causes, each with where it is ("at /verdict: value
// must be one of 'approve', 'reject'"), without the library's summary lines and the "allOf failed"
// steps between them.
func schemaError(err error) error {
	var se *jsonschema.SchemaValidationError // a schema that is not one: the metaschema's verdict
	if errors.As(err, &se) {
		err = se.Err
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var msgs []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		msgs = append(msgs, fmt.Sprintf("at /%s: %s", strings.Join(e.InstanceLocation, "/"), e.ErrorKind.LocalizedString(english)))
	}
	walk(ve)
	return errors.New(strings.Join(msgs, "; "))
}

var english = message.NewPrinter(language.English)

// noLoader refuses every $ref to another document: a schema in a workflow file must not make the
// bot read local files or fetch URLs when it is loaded.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("output_format may not refer to another document (%s); put the definitions in $defs", url)
}

// outputFormat decodes `output_format`: a mapping that is a JSON Schema of an object with
// `properties`, compiled once here so that a mistake in it is a load error with its position.
func (d *decoder) outputFormat(f field, node *Node) *OutputFormat {
	if node.Kind != "" && node.Kind != KindPrompt {
		d.errorf(f.key, "`output_format` applies only to prompt nodes; remove it from this %s node", node.Kind)
		return nil
	}
	if f.val.Kind != yaml.MappingNode {
		d.errorf(f.val, "`output_format` must be a JSON Schema mapping like {type: object, properties: {verdict: {type: string}}}, found %s", describe(f.val))
		return nil
	}
	var doc any
	if err := f.val.Decode(&doc); err != nil {
		d.errorf(f.val, "`output_format` is not a JSON Schema: %v", err)
		return nil
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		d.errorf(f.val, "`output_format` cannot be written as JSON: %v", err)
		return nil
	}
	if len(raw) > maxSchemaBytes {
		d.errorf(f.val, "`output_format` is %d bytes as JSON, more than %d; shorten it", len(raw), maxSchemaBytes)
		return nil
	}
	m, _ := doc.(map[string]any)
	props, ok := m["properties"].(map[string]any)
	if m["type"] != "object" || !ok || len(props) == 0 {
		d.errorf(f.val, "`output_format` must describe an object with `properties` (type: object), so that $%s.output.<field> can read its fields", node.ID)
		return nil
	}
	o := &OutputFormat{Schema: raw}
	for name := range props {
		if !validField(name) {
			d.errorf(f.val, "`output_format` property %q cannot be read as $%s.output.<field>; name it with letters, digits and '_' (starting with a letter)", name, node.ID)
			return nil
		}
		o.Fields = append(o.Fields, name)
	}
	sort.Strings(o.Fields)
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	const loc = "urn:threadflow:output_format"
	jdoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw)) // numbers as the validator reads them
	if err == nil {
		err = c.AddResource(loc, jdoc)
	}
	if err != nil {
		d.errorf(f.val, "`output_format` is not a valid JSON Schema: %v", err)
		return nil
	}
	if o.schema, err = c.Compile(loc); err != nil {
		d.errorf(f.val, "`output_format` is not a valid JSON Schema: %s", oneLine(schemaError(err).Error()))
		return nil
	}
	return o
}

// oneLine joins the lines of a multi-line library message.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// hasField reports whether the schema declares field.
func (o *OutputFormat) hasField(field string) bool { return slices.Contains(o.Fields, field) }
