package web_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"threadflow/db"
	"threadflow/testkit"
)

// branchyWorkflow's first node prints a line, then waits until the file named by its arguments
// exists, so the test sees it running; `never` is skipped by its condition.
const branchyWorkflow = `name: branchy
nodes:
  - id: start
    bash: |
      echo first line of live output
      while [ ! -e "$ARGUMENTS" ]; do sleep 0.05; done
      echo released
  - id: never
    depends_on: [start]
    when: "$start.output == 'nope'"
    bash: echo no
  - id: after
    depends_on: [start]
    bash: echo after
`

func TestRunPageDrawsTheGraphWithLiveOutputAndReasons(t *testing.T) {
	r := newRig(t, rigOptions{workflows: map[string]string{"branchy.yaml": branchyWorkflow}})
	b := r.browser("")
	release := filepath.Join(t.TempDir(), "release")
	b.say("/workflow run branchy " + release)
	run := r.waitRun("branchy", db.StatusRunning)

	var page string
	testkit.Eventually(t, "the running node's live output on the run page", func() bool {
		_, page = b.get("/runs/" + run.ID)
		return strings.Contains(page, "first line of live output")
	})
	for _, want := range []string{
		`<svg class="graph" id="graph"`, `class="gnode gnode-running" id="gnode-start"`, `class="gnode gnode-pending" id="gnode-after"`,
		`id="live-start"`, `id="reason-after">waits for start</p>`, `id="reason-never">waits for start</p>`,
		`action="/runs/` + run.ID + `/cancel"`, `id="btn-cancel"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("running run page lacks %q:\n%s", want, page)
		}
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r.waitRun("branchy", db.StatusCompleted)
	_, page = b.get("/runs/" + run.ID)
	for _, want := range []string{
		`class="gnode gnode-skipped" id="gnode-never"`, `class="gnode gnode-completed" id="gnode-after"`,
		`id="reason-never">condition `, `is false</p>`, `class="edge"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("completed run page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, `id="btn-cancel"`) {
		t.Errorf("a completed run still offers Cancel")
	}
	_, list := b.get("/")
	if !strings.Contains(list, `id="state-counts"`) || !strings.Contains(list, ">completed 1</span>") || !strings.Contains(list, ">running 0</span>") {
		t.Errorf("runs list lacks the counts per state:\n%s", list)
	}
}

func TestCancelFromTheRunPage(t *testing.T) {
	r := newRig(t, rigOptions{workflows: map[string]string{"branchy.yaml": branchyWorkflow}})
	b := r.browser("")
	b.say("/workflow run branchy " + filepath.Join(t.TempDir(), "never-created"))
	run := r.waitRun("branchy", db.StatusRunning)
	testkit.Eventually(t, "the running node's live output", func() bool {
		_, page := b.get("/runs/" + run.ID)
		return strings.Contains(page, `id="live-start">first line of live output`)
	})
	if code, _ := b.post("/runs/"+run.ID+"/cancel", nil); code != 200 {
		t.Fatalf("cancel button answered %d", code)
	}
	r.waitRun("branchy", db.StatusCancelled)
	// The node the cancel stopped is cancelled, with what it printed; the others never ran.
	_, page := b.get("/runs/" + run.ID)
	for _, want := range []string{
		`class="gnode gnode-cancelled" id="gnode-start"`, `class="gnode gnode-not_run" id="gnode-after"`,
		`id="reason-start">cancelled by `, `id="reason-after">not run: the run was cancelled</p>`,
		`output until it was stopped`, `id="partial-start">first line of live output`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("cancelled run page lacks %q:\n%s", want, page)
		}
	}
	for _, stale := range []string{"gnode-running", "gnode-pending", "live output ("} {
		if strings.Contains(page, stale) {
			t.Errorf("cancelled run page still shows %q:\n%s", stale, page)
		}
	}
}

func TestRunsListIsPaged(t *testing.T) {
	r := newRig(t, rigOptions{workflows: map[string]string{"quick.yaml": "name: quick\nnodes:\n  - id: a\n    bash: 'true'\n"}})
	b := r.browser("")
	for range 51 {
		b.say("/workflow run quick")
	}
	r.idle()
	testkit.Eventually(t, "51 completed runs", func() bool {
		_, list := b.get("/")
		return strings.Contains(list, ">completed 51</span>")
	})
	_, first := b.get("/?workflow=quick")
	if strings.Count(first, `<tr id="run-`) != 50 || !strings.Contains(first, `id="page-next" href="/?page=2&amp;workflow=quick"`) || strings.Contains(first, `id="page-prev"`) {
		t.Fatalf("first page: want 50 rows and a link to page 2:\n%s", first)
	}
	_, second := b.get("/?workflow=quick&page=2")
	if strings.Count(second, `<tr id="run-`) != 1 || !strings.Contains(second, `id="page-prev"`) || strings.Contains(second, `id="page-next"`) {
		t.Fatalf("second page: want 1 row and a link back:\n%s", second)
	}
}

const artifactWorkflow = `name: reports
nodes:
  - id: write
    bash: |
      mkdir -p "$ARTIFACTS_DIR/sub"
      printf 'all green\n' > "$ARTIFACTS_DIR/report.txt"
      printf '<script>alert(1)</script>' > "$ARTIFACTS_DIR/sub/page.html"
      ln -s /etc/passwd "$ARTIFACTS_DIR/passwd"
`

func TestArtifactsAreListedAndDownloadable(t *testing.T) {
	r := newRig(t, rigOptions{workflows: map[string]string{"reports.yaml": artifactWorkflow}})
	b := r.browser("")
	b.say("/workflow run reports")
	run := r.waitRun("reports", db.StatusCompleted)
	_, page := b.get("/runs/" + run.ID)
	for _, want := range []string{`id="artifacts"`, `href="/runs/` + run.ID + `/artifacts/report.txt"`, `href="/runs/` + run.ID + `/artifacts/sub/page.html"`} {
		if !strings.Contains(page, want) {
			t.Errorf("run page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "artifacts/passwd") {
		t.Errorf("the run page lists a symbolic link out of the artifacts directory")
	}
	resp, err := b.c.Get(r.srv.URL + "/runs/" + run.ID + "/artifacts/sub/page.html")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/octet-stream" ||
		!strings.HasPrefix(resp.Header.Get("Content-Disposition"), `attachment; filename="page.html"`) {
		t.Errorf("artifact download = %d %v; want 200 as an attachment", resp.StatusCode, resp.Header)
	}
	if code, body := b.get("/runs/" + run.ID + "/artifacts/report.txt"); code != 200 || body != "all green\n" {
		t.Errorf("report.txt = %d %q", code, body)
	}
	for _, p := range []string{"passwd", "../work", "..%2f..%2fthreadflow.db", "sub/../../outputs"} {
		// Go's client and mux clean "..", so some of these never reach the handler: nothing is served.
		if code, body := b.get("/runs/" + run.ID + "/artifacts/" + p); code == 200 || strings.Contains(body, "root:") {
			t.Errorf("artifact %q = %d %q; want a refusal", p, code, body)
		}
	}
}

// The output of a node that has not ended is readable wherever a finished one is, marked partial:
// on the run page and at its output link, while it runs and after its run was cancelled (the run
// a person cancels because it hung is the one whose log they need). An unknown node's link names
// the run's nodes.
func TestPartialOutputIsServedWhileRunningAndAfterACancel(t *testing.T) {
	r := newRig(t, rigOptions{workflows: map[string]string{"branchy.yaml": branchyWorkflow}})
	b := r.browser("")
	b.say("/workflow run branchy " + filepath.Join(t.TempDir(), "never-created"))
	run := r.waitRun("branchy", db.StatusRunning)
	link := "/runs/" + run.ID + "/output/start"
	// label is how the run page introduces the output, pre the id of the block that holds it.
	assertPartial := func(why, label, pre string) {
		t.Helper()
		var page string
		testkit.Eventually(t, "the run page to show the partial output: "+why, func() bool {
			_, page = b.get("/runs/" + run.ID)
			return strings.Contains(page, `id="partial-note-start">`+label+`, partial: `+why+` (`)
		})
		for _, want := range []string{`id="` + pre + `">first line of live output`, `href="` + link + `">partial output of attempt 1 (`} {
			if !strings.Contains(page, want) {
				t.Errorf("run page lacks %q:\n%s", want, page)
			}
		}
		code, body := b.get(link)
		if want := "[partial output of attempt 1 of start: " + why + "]\n\nfirst line of live output\n"; code != 200 || body != want {
			t.Errorf("GET %s = %d %q, want 200 %q", link, code, body, want)
		}
	}
	assertPartial("the node is still running", "live output", "live-start")
	if code, _ := b.post("/runs/"+run.ID+"/cancel", nil); code != 200 {
		t.Fatalf("cancel button answered %d", code)
	}
	r.waitRun("branchy", db.StatusCancelled)
	assertPartial("the run was cancelled while it ran", "output until it was stopped", "partial-start")

	code, body := b.get("/runs/" + run.ID + "/output/strat")
	if want := `Run ` + run.ID + ` has no node "strat"; its nodes are start, never, after.`; code != 404 || !strings.Contains(body, want) {
		t.Errorf("output of an unknown node = %d %q, want 404 with %q", code, body, want)
	}
	code, body = b.get("/runs/" + run.ID + "/output/after")
	if want := `Node after of run ` + run.ID + ` has no output: not run: the run was cancelled.`; code != 404 || !strings.Contains(body, want) {
		t.Errorf("output of a node that never ran = %d %q, want 404 with %q", code, body, want)
	}
}
