package workflow

import (
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// maxInputs bounds a workflow's inputs: a form shows each of them.
const maxInputs = 20

func (d *decoder) inputs(f field) []Input {
	if f.val.Kind != yaml.SequenceNode {
		d.errorf(f.val, "`inputs` must be a list of {name, description, type, choices, default, required, pattern}, found %s", describe(f.val))
		return nil
	}
	if len(f.val.Content) > maxInputs {
		d.errorf(f.val, "a workflow takes at most %d inputs, this one declares %d", maxInputs, len(f.val.Content))
	}
	var out []Input
	seen, envs := map[string]int{}, map[string]string{}
	for _, n := range f.val.Content {
		fs := d.mapping(n, "an input", inputFields)
		if fs == nil {
			continue
		}
		var in Input
		if nf, ok := fs["name"]; !ok {
			d.errorf(n, "input has no `name`; add `name: <what the argument is>`")
		} else if in.Name, ok = d.id(nf); ok {
			if line, dup := seen[in.Name]; dup {
				d.errorf(nf.val, "input `%s` is declared twice (first at line %d); rename or remove one", in.Name, line)
			} else if other, clash := envs[InputEnvName(in.Name)]; clash {
				d.errorf(nf.val, "inputs `%s` and `%s` would both be %s in scripts; rename one", other, in.Name, InputEnvName(in.Name))
			}
			seen[in.Name], envs[InputEnvName(in.Name)] = nf.val.Line, in.Name
		}
		if df, ok := fs["description"]; ok {
			in.Description, _ = d.str(df)
		}
		if rf, ok := fs["required"]; ok {
			in.Required = d.boolean(rf)
		}
		d.inputType(fs, &in)
		out = append(out, in)
	}
	return out
}

// inputType reads type, choices, pattern and default, checking that they fit together and that
// the default is a value the input accepts.
func (d *decoder) inputType(fs map[string]field, in *Input) {
	if tf, ok := fs["type"]; ok {
		t, _ := d.oneOf(tf, inputTypes)
		in.Type = InputType(t)
	}
	if cf, ok := fs["choices"]; ok {
		in.Choices = d.choices(cf)
		if k := in.Kind(); k != TypeChoice {
			d.errorf(cf.key, "`choices` belong to inputs of type choice, and %s is %s", in.Name, k)
		}
	} else if in.Type == TypeChoice {
		if tf := fs["type"]; tf.val != nil {
			d.errorf(tf.val, "input %s is a choice but lists no `choices`; add `choices: [a, b]`", in.Name)
		}
	}
	if pf, ok := fs["pattern"]; ok {
		d.pattern(pf, in)
	}
	if df, ok := fs["default"]; ok {
		if df.val.Kind != yaml.ScalarNode || df.val.ShortTag() == "!!null" {
			d.errorf(df.val, "`default` must be a value, found %s", describe(df.val))
			return
		}
		norm, err := in.Check(df.val.Value)
		if err != nil {
			d.errorf(df.val, "the default does not fit: %s", err.Error())
			return
		}
		in.Default, in.HasDefault = norm, true
	}
}

func (d *decoder) choices(f field) []string {
	if f.val.Kind != yaml.SequenceNode || len(f.val.Content) == 0 {
		d.errorf(f.val, "`choices` must be a non-empty list of values, found %s", describe(f.val))
		return nil
	}
	var out []string
	for _, c := range f.val.Content {
		if c.Kind != yaml.ScalarNode || c.ShortTag() == "!!null" || strings.TrimSpace(c.Value) == "" || len(c.Value) > 100 {
			d.errorf(c, "each choice must be a value of 1 to 100 bytes, found %s", describe(c))
			continue
		}
		if contains(out, c.Value) {
			d.errorf(c, "choice %q is listed twice", clip(c.Value))
			continue
		}
		out = append(out, c.Value)
	}
	if len(out) > 25 {
		d.errorf(f.val, "an input takes at most 25 choices (a chat menu shows no more), this one lists %d", len(out))
	}
	return out
}

// pattern compiles an input's pattern anchored at both ends: a value matches the pattern as a
// whole, as in an HTML form, so `v[0-9]+` does not accept "xv1y".
func (d *decoder) pattern(f field, in *Input) {
	s, ok := d.nonEmpty(f)
	if !ok {
		return
	}
	if k := in.Kind(); k != TypeString {
		d.errorf(f.key, "`pattern` belongs to string inputs, and %s is %s", in.Name, k)
		return
	}
	re, err := regexp.Compile(`^(?:` + s + `)$`)
	if err != nil {
		d.errorf(f.val, "`pattern` is not a regular expression (Go RE2 syntax): %v", err)
		return
	}
	in.Pattern, in.PatternText = re, s
}
