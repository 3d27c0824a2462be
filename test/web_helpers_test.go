package test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"threadflow/testkit"
)

// chromiumPath is where Debian's chromium package installs the browser.
const chromiumPath = "/usr/bin/chromium"

// browser starts a headless Chromium for the test and returns a chromedp context bounded by
// testkit.Deadline. Without Chromium the test is skipped, except on CI (CI=true), where it fails:
// .ci/run installs it.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath
	if _, err := os.Stat(path); err != nil {
		if p, lookErr := exec.LookPath("chromium"); lookErr == nil {
			path = p
		} else {
			testkit.Missing(t, "chromium is not installed at %s; apt-get install -y chromium to run the browser tests", chromiumPath)
		}
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 860),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	// No deadline for the browser's whole life: a test of many steps on a loaded machine outlived
	// one (2*Deadline once bounded them all, and failed with "context deadline exceeded" however
	// healthy each step). Each step has its own (step), as every wait of testkit does.
	ctx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithErrorf(t.Logf))
	t.Cleanup(func() { cancelBrowser(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser now, so a broken install fails here
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// step is the context of one browser step of a test: the browser's, within testkit.Deadline.
func step(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, testkit.Deadline)
}

// screenshot saves a PNG of the page (quality 100 is what makes Chromium encode PNG, not JPEG) to $THREADFLOW_SCREENSHOTS/name when that is set: the
// README's pictures are taken by running the browser test with it (see README, Dashboard).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("THREADFLOW_SCREENSHOTS")
	if dir == "" {
		return
	}
	ctx, cancel := step(ctx)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
