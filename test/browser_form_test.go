package test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"threadflow/testkit/botproc"
)

// The dashboard's Run form: the runs page links to it; a version its pattern refuses is shown
// beside the field with nothing started; a valid form starts the run and shows its page, with its
// inputs, and its script sees INPUT_VERSION.
func TestBrowserRunFormOnTheDashboard(t *testing.T) {
	ctx := browser(t)
	const token = "browser-form-token"
	env, counters := formEnv(t)
	env["WORKFLOWS_DIR"] = workflowDir(t, map[string]string{"release.yaml": formRelease})
	env["DASHBOARD_TOKEN"] = token
	base := botproc.Start(t, env).URL()
	st := openStore(t, env)

	act(t, ctx, "open the Run form from the runs page",
		chromedp.Navigate(base+"?token="+token),
		chromedp.WaitVisible(chromedp.CSS(`a.run-form-link[href="/run/release"]`)),
		chromedp.Click(chromedp.CSS(`a.run-form-link[href="/run/release"]`)),
		chromedp.WaitVisible(chromedp.CSS("#in-version")),
	)
	act(t, ctx, "submit a version the pattern refuses",
		chromedp.SendKeys(chromedp.CSS("#in-version"), "1.4.2"),
		chromedp.SetValue(chromedp.CSS("#in-env"), "prod"),
		chromedp.Click(chromedp.CSS("#run-submit")),
		chromedp.WaitVisible(chromedp.CSS(".field-error")),
	)
	if msg := value(t, ctx, "read the field's error", chromedp.Text(chromedp.CSS(".field-error"))); !strings.Contains(msg, "input version does not accept") {
		t.Fatalf("the form says %q", msg)
	}
	if env := value(t, ctx, "read the kept choice", chromedp.Value(chromedp.CSS("#in-env"))); env != "prod" {
		t.Fatalf("the refused form forgot the environment chosen: %q", env)
	}
	noRuns(t, st)
	screenshot(t, ctx, "dashboard-run-form.png")

	act(t, ctx, "submit a valid version",
		chromedp.SetValue(chromedp.CSS("#in-version"), "v1.4.2"),
		chromedp.Click(chromedp.CSS("#run-submit")),
		chromedp.WaitVisible(`//span[@id="run-state" and contains(., "completed")]`),
	)
	if loc := value(t, ctx, "read the address", chromedp.Location()); !strings.Contains(loc, "/runs/") {
		t.Fatalf("after the form the browser is at %s, want the run's page", loc)
	}
	if in := value(t, ctx, "read the run's inputs", chromedp.Text(chromedp.CSS("#run-inputs"))); !strings.Contains(in, "env=prod") || !strings.Contains(in, "version=v1.4.2") {
		t.Fatalf("the run page shows inputs %q", in)
	}
	if got := shipped(t, counters); got != "v1.4.2 prod" {
		t.Fatalf("the script saw %q, want INPUT_VERSION and INPUT_ENV as submitted", got)
	}
}
