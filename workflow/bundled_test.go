package workflow

import (
	"io/fs"
	"testing"
)

func TestBundledWorkflowsParse(t *testing.T) {
	t.Parallel()
	names, err := fs.Glob(Bundled(), "*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"hello": true, "review": true, "plan-loop": true, "release": true}
	for _, name := range names {
		src, err := fs.ReadFile(Bundled(), name)
		if err != nil {
			t.Fatal(err)
		}
		w, err := Parse("bundled/"+name, src)
		if err != nil {
			t.Errorf("bundled %s does not parse:\n%v", name, err)
			continue
		}
		if w.Name+".yaml" != name {
			t.Errorf("bundled %s is named %q; name the file after the workflow", name, w.Name)
		}
		delete(want, w.Name)
	}
	if len(want) > 0 {
		t.Errorf("bundled workflows missing: %v", want)
	}
}
