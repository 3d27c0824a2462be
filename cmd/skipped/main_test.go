package main

import (
	"strings"
	"testing"
)

// stream is `go test -json` of three packages, as go1.26 writes it: one whose PostgreSQL tests
// skipped (three of them, one a subtest), one with a failed test, one without tests.
const stream = `{"Action":"start","Package":"threadflow/db/postgres"}
{"Action":"run","Package":"threadflow/db/postgres","Test":"TestOpen"}
{"Action":"output","Package":"threadflow/db/postgres","Test":"TestOpen","Output":"=== RUN   TestOpen\n"}
{"Action":"output","Package":"threadflow/db/postgres","Test":"TestOpen","Output":"--- PASS: TestOpen (0.00s)\n"}
{"Action":"pass","Package":"threadflow/db/postgres","Test":"TestOpen","Elapsed":0}
{"Action":"output","Package":"threadflow/db/postgres","Test":"TestConformance/Leases","Output":"=== RUN   TestConformance/Leases\n"}
{"Action":"output","Package":"threadflow/db/postgres","Test":"TestConformance/Leases","Output":"    store_test.go:24: TEST_DATABASE_URL is not set; set it to a PostgreSQL server\n"}
{"Action":"output","Package":"threadflow/db/postgres","Test":"TestConformance/Leases","Output":"--- SKIP: TestConformance/Leases (0.00s)\n"}
{"Action":"skip","Package":"threadflow/db/postgres","Test":"TestConformance/Leases","Elapsed":0}
{"Action":"output","Package":"threadflow/db/postgres","Test":"TestReady","Output":"    store_test.go:60: TEST_DATABASE_URL is not set; set it to a PostgreSQL server\n"}
{"Action":"skip","Package":"threadflow/db/postgres","Test":"TestReady","Elapsed":0}
{"Action":"output","Package":"threadflow/db/postgres","Test":"TestLocked","Output":"    open_test.go:92: waits out the 10s busy timeout\n"}
{"Action":"skip","Package":"threadflow/db/postgres","Test":"TestLocked","Elapsed":0}
{"Action":"output","Package":"threadflow/db/postgres","Test":"TestListen","Output":"    store_test.go:80: TEST_DATABASE_URL is not set; set it to a PostgreSQL server\n"}
{"Action":"skip","Package":"threadflow/db/postgres","Test":"TestListen","Elapsed":0}
{"Action":"output","Package":"threadflow/db/postgres","Test":"TestWrite","Output":"    store_test.go:90: TEST_DATABASE_URL is not set; set it to a PostgreSQL server\n"}
{"Action":"skip","Package":"threadflow/db/postgres","Test":"TestWrite","Elapsed":0}
{"Action":"output","Package":"threadflow/db/postgres","Output":"PASS\n"}
{"Action":"output","Package":"threadflow/db/postgres","Output":"ok  \tthreadflow/db/postgres\t0.009s\n"}
{"Action":"pass","Package":"threadflow/db/postgres","Elapsed":0.01}
{"Action":"output","Package":"threadflow/workflow","Test":"TestParse","Output":"=== RUN   TestParse\n"}
{"Action":"output","Package":"threadflow/workflow","Test":"TestParse","Output":"    parse_test.go:9: got 2:1, want 5:3\n"}
{"Action":"output","Package":"threadflow/workflow","Test":"TestParse","Output":"--- FAIL: TestParse (0.00s)\n"}
{"Action":"fail","Package":"threadflow/workflow","Test":"TestParse","Elapsed":0}
{"Action":"output","Package":"threadflow/workflow","Output":"FAIL\n"}
{"Action":"output","Package":"threadflow/workflow","Output":"FAIL\tthreadflow/workflow\t0.010s\n"}
{"Action":"fail","Package":"threadflow/workflow","Elapsed":0.01}
{"Action":"output","Package":"threadflow/migrations","Output":"?   \tthreadflow/migrations\t[no test files]\n"}
{"Action":"skip","Package":"threadflow/migrations","Elapsed":0}
`

func TestSummaryShowsResultsFailuresAndSkipsWithTheirReasons(t *testing.T) {
	var out strings.Builder
	failed, err := summarise(strings.NewReader(stream), &out)
	if err != nil || !failed {
		t.Fatalf("summarise = %v, %v; want failed and no error", failed, err)
	}
	want := "ok  \tthreadflow/db/postgres\t0.009s\n" +
		"=== RUN   TestParse\n    parse_test.go:9: got 2:1, want 5:3\n--- FAIL: TestParse (0.00s)\n" +
		"FAIL\nFAIL\tthreadflow/workflow\t0.010s\n" +
		"?   \tthreadflow/migrations\t[no test files]\n" +
		"\nSkipped tests, by package and reason:\n" +
		"  threadflow/db/postgres: TEST_DATABASE_URL is not set; set it to a PostgreSQL server\n" +
		"      TestConformance/Leases, TestReady, TestListen and 1 more\n" +
		"  threadflow/db/postgres: waits out the 10s busy timeout\n" +
		"      TestLocked\n"
	if out.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestSummaryOfARunWithoutSkips(t *testing.T) {
	var out strings.Builder
	in := `{"Action":"output","Package":"threadflow/testkit","Output":"ok  \tthreadflow/testkit\t0.004s\n"}
{"Action":"pass","Package":"threadflow/testkit","Elapsed":0.004}
`
	failed, err := summarise(strings.NewReader(in), &out)
	if err != nil || failed || out.String() != "ok  \tthreadflow/testkit\t0.004s\n\nNo test was skipped.\n" {
		t.Errorf("summarise = %v, %v:\n%s", failed, err, out.String())
	}
	if _, err := summarise(strings.NewReader("ok threadflow/x\n"), &out); err == nil {
		t.Errorf("summarise of plain go test output succeeded; want an error saying it needs -json")
	}
}
