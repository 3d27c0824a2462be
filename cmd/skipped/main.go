// Command skipped reads `go test -json` and prints what `go test` prints (each package's result, the
// output of every failed test), then every skipped test, grouped by package and reason:
//
//	go test -race -json ./... | go run ./cmd/skipped
//
// Without it a package whose tests all skipped, for lack of PostgreSQL or Chromium, prints "ok"
// like one whose tests ran, and `go test -v` buries the reasons among thousands of lines. It exits
// 1 when a test or a package failed, as go test does.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

func main() {
	failed, err := summarise(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "skipped:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// skipGroup is the tests of one package skipped for one reason.
type skipGroup struct{ pkg, reason string }

// testsShown is how many test names a skip group lists before "and N more".
const testsShown = 3

// summarise copies the results of r to w as go test prints them, followed by the skips, and
// reports whether anything failed.
func summarise(r io.Reader, w io.Writer) (failed bool, err error) {
	type testKey struct{ pkg, test string }
	output := map[testKey][]string{} // each running test's output, until it ends
	skipped := map[skipGroup][]string{}
	var groups []skipGroup // in the order met
	dec := json.NewDecoder(r)
	for {
		var e event
		if err := dec.Decode(&e); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return failed, fmt.Errorf("the input is not go test -json output (%w); pipe go test -json ./... into it", err)
		}
		key := testKey{e.Package, e.Test}
		switch {
		case e.Action == "build-output", e.Action == "output" && e.Test == "" && e.Output != "PASS\n":
			fmt.Fprint(w, e.Output)
		case e.Action == "output" && e.Test != "":
			output[key] = append(output[key], e.Output)
		case e.Action == "skip" && e.Test != "":
			g := skipGroup{e.Package, reason(output[key])}
			if _, ok := skipped[g]; !ok {
				groups = append(groups, g)
			}
			skipped[g] = append(skipped[g], e.Test)
		case e.Action == "fail":
			failed = true
			for _, line := range output[key] {
				fmt.Fprint(w, line)
			}
		}
		if e.Test != "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip") {
			delete(output, key)
		}
	}
	report(w, groups, skipped)
	return failed, nil
}

// report prints the skipped tests.
func report(w io.Writer, groups []skipGroup, skipped map[skipGroup][]string) {
	if len(groups) == 0 {
		fmt.Fprintln(w, "\nNo test was skipped.")
		return
	}
	fmt.Fprintln(w, "\nSkipped tests, by package and reason:")
	for _, g := range groups {
		tests := skipped[g]
		names := strings.Join(tests[:min(len(tests), testsShown)], ", ")
		if extra := len(tests) - testsShown; extra > 0 {
			names += fmt.Sprintf(" and %d more", extra)
		}
		fmt.Fprintf(w, "  %s: %s\n      %s\n", g.pkg, g.reason, names)
	}
}

// testLine is the location go test puts before what a test logged ("    store_test.go:24: ").
var testLine = regexp.MustCompile(`^\s*\S+\.go:\d+: `)

// reason is what a skipped test said before it stopped, without the lines go test adds itself.
func reason(output []string) string {
	var parts []string
	for _, line := range output {
		line = strings.TrimSpace(testLine.ReplaceAllString(line, ""))
		if line == "" || strings.HasPrefix(line, "=== ") || strings.HasPrefix(line, "--- ") {
			continue
		}
		parts = append(parts, line)
	}
	if len(parts) == 0 {
		return "no reason given"
	}
	return strings.Join(parts, " ")
}
