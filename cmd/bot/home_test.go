package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"threadflow/testkit/botproc"
)

// THREADFLOW_HOME defaults to a directory per user, the same from every working directory.
func TestDefaultHomeIsPerUser(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HOME": "/home/ann"}, "/home/ann/.local/share/threadflow"},
		{map[string]string{"HOME": "/home/ann", "XDG_DATA_HOME": "/data/ann"}, "/data/ann/threadflow"},
		{map[string]string{"HOME": "/home/ann", "XDG_DATA_HOME": "relative"}, "/home/ann/.local/share/threadflow"}, // the spec ignores it
		{map[string]string{"HOME": "/home/ann", "THREADFLOW_HOME": "/srv/tf"}, "/srv/tf"},
	} {
		c, err := loadConfig("workflow", nil, envOf(tt.env), currentHost(envOf(tt.env), nil))
		if err != nil || c.Home != tt.want || c.HomeDefault != (tt.env["THREADFLOW_HOME"] == "") {
			t.Errorf("env %v: Home %q (default %v), %v; want %q", tt.env, c.Home, c.HomeDefault, err, tt.want)
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	env := envOf(map[string]string{"THREADFLOW_HOME": "rel/home"})
	if c, err := loadConfig("workflow", nil, env, currentHost(env, nil)); err != nil || c.Home != filepath.Join(wd, "rel/home") {
		t.Errorf("a relative THREADFLOW_HOME = %q, %v; want it made absolute: %s", c.Home, err, filepath.Join(wd, "rel/home"))
	}
	_, err = loadConfig("workflow", nil, envOf(nil), currentHost(envOf(nil), nil))
	if want := "THREADFLOW_HOME is not set, and neither is HOME (nor XDG_DATA_HOME)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("no HOME and no THREADFLOW_HOME: %v; want %q", err, want)
	}
}

// A home in the working directory's .threadflow, the default of earlier versions, is not used
// silently: the command says where its runs are and how to use the old ones.
func TestAnOldHomeInTheWorkingDirectoryIsNamed(t *testing.T) {
	bin, home := botproc.Binary(t), t.TempDir()
	project := filepath.Join(home, "project")
	if err := os.Mkdir(project, 0o755); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(project, ".threadflow")
	if _, stderr, code := runIn(t, bin, project, []string{"HOME=" + home, "THREADFLOW_HOME=.threadflow"}, "workflow", "run", "hello", "old"); code != 0 ||
		!strings.Contains(stderr, "New database "+old+"/threadflow.db (THREADFLOW_HOME="+old+").") {
		t.Fatalf("a run in ./.threadflow = exit %d, stderr:\n%s", code, stderr)
	}
	stdout, stderr, code := runIn(t, bin, project, []string{"HOME=" + home}, "workflow", "runs")
	want := "The database in " + old + "/threadflow.db is not used: runs are kept in " + userHome(home) +
		", wherever a command runs, unless THREADFLOW_HOME says otherwise. To use that one, set THREADFLOW_HOME=" + old + "\n"
	if code != 0 || !strings.Contains(stderr, want) || !strings.Contains(stdout, "No runs yet") {
		t.Errorf("workflow runs next to an old home = exit %d, stdout:\n%s\nstderr:\n%s\nwant %q", code, stdout, stderr, want)
	}
	stdout, stderr, _ = runIn(t, bin, project, []string{"HOME=" + home, "THREADFLOW_HOME=" + old}, "workflow", "runs")
	if !strings.Contains(stdout, "hello") || stderr != "" {
		t.Errorf("with THREADFLOW_HOME set to it, the old home's runs = stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
}
