package test

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"

	"threadflow/testkit/botproc"
)

// TestMain removes the bot binary the tests built (botproc builds it once for all of them), and
// runs up to testParallel parallel tests at once unless -parallel says otherwise. go test's default
// is GOMAXPROCS, 2 on CI, but these tests mostly wait on the processes they start (bots, CLIs,
// Chromium, fakes): at 2 the package used under a third of 2 cores (430 s of CPU in 1,486 s) and
// was the suite's longest by far (869 s on CI). The tests that must not share the machine (the
// browser, Discord callback and crash-chaos tests) are not parallel and still run alone.
func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		if err := flag.Set("test.parallel", strconv.Itoa(max(testParallel, runtime.GOMAXPROCS(0)))); err != nil {
			panic(err)
		}
	}
	os.Exit(botproc.Main(m))
}

// testParallel is how many of this package's parallel tests run at once by default.
const testParallel = 4
