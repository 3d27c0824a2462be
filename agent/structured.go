package agent

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"threadflow/db"
)

// maxStructured bounds a structured answer: it becomes a node's output and its fields variables.
const maxStructured = 1 << 20

// structuredAnswer is the turn's structured answer as compact JSON, or a failure when the request
// asked for one (Request.OutputSchema) and the CLI answered without it: a prose answer where the
// workflow branches on a field must fail the node, not read as empty fields.
func (c cli) structuredAnswer(r Request, v verdict) (json.RawMessage, *Error) {
	if len(r.OutputSchema) == 0 {
		return nil, nil
	}
	var b bytes.Buffer
	if len(v.structured) == 0 || json.Compact(&b, v.structured) != nil || b.String() == "null" {
		msg := fmt.Sprintf("%s answered without the structured answer the node's output_format asks for: %q", c.display, detail(v.text))
		if v.refusal != "" {
			msg = fmt.Sprintf("%s refused the structured answers it was given: %s", c.display, detail(v.refusal))
		}
		return nil, &Error{Class: db.ClassPermanent, SessionID: cmp.Or(v.sessionID, r.SessionID), Msg: msg,
			Hint: "make the prompt ask for the fields of output_format, or retry the node"}
	}
	if b.Len() > maxStructured {
		return nil, &Error{Class: db.ClassPermanent, SessionID: cmp.Or(v.sessionID, r.SessionID),
			Msg: fmt.Sprintf("%s's structured answer is %d bytes, more than %d", c.display, b.Len(), maxStructured)}
	}
	return b.Bytes(), nil
}

// jsonText returns text as JSON when it is one JSON value (Codex's final message under
// --output-schema), else nil.
func jsonText(text string) json.RawMessage {
	t := strings.TrimSpace(text)
	if t == "" || !json.Valid([]byte(t)) {
		return nil
	}
	return json.RawMessage(t)
}

// closedSchema is schema with "additionalProperties": false on every object schema that does not
// say otherwise. Codex sends --output-schema to OpenAI's strict structured outputs, which refuse a
// schema without it; what the node accepts is still decided by the full schema, in the workflow.
func closedSchema(schema json.RawMessage) (json.RawMessage, error) {
	var v any
	if err := json.Unmarshal(schema, &v); err != nil {
		return nil, err
	}
	closeObjects(v)
	return json.Marshal(v)
}

// closeObjects adds additionalProperties: false to every object schema inside v.
func closeObjects(v any) {
	switch t := v.(type) {
	case map[string]any:
		if _, hasProps := t["properties"]; hasProps || t["type"] == "object" {
			if _, said := t["additionalProperties"]; !said {
				t["additionalProperties"] = false
			}
		}
		for k, child := range t {
			if k != "enum" && k != "const" && k != "default" && k != "examples" { // values, not schemas
				closeObjects(child)
			}
		}
	case []any:
		for _, child := range t {
			closeObjects(child)
		}
	}
}

// schemaFile writes Codex's --output-schema file, removed by the returned function.
func schemaFile(schema json.RawMessage) (string, func(), error) {
	closed, err := closedSchema(schema)
	if err != nil {
		return "", nil, &Error{Class: db.ClassPermanent, Msg: "the node's output_format is not JSON", Err: err}
	}
	f, err := os.CreateTemp("", "threadflow-output-schema-*.json")
	if err != nil {
		return "", nil, &Error{Class: db.ClassInfra, Msg: "cannot write the output schema for Codex", Err: err}
	}
	remove := func() { _ = os.Remove(f.Name()) } // a temporary file: nothing to do if it is gone
	_, werr := f.Write(closed)
	if err := cmp.Or(werr, f.Close()); err != nil {
		remove()
		return "", nil, &Error{Class: db.ClassInfra, Msg: "cannot write the output schema for Codex", Err: err}
	}
	return f.Name(), remove, nil
}
