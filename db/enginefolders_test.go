package db_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// engineOnly are the files that exist in one engine folder only, each because the other engine has
// nothing of the kind. Every other file name appears in both folders, so a reader who knows where
// something lives in one engine finds its counterpart in the other under the same name.
var engineOnly = map[string]string{
	"postgres/listen.go":      "LISTEN/NOTIFY tells other replicas a transcript changed; a SQLite file has one process",
	"postgres/listen_test.go": "tests listen.go",
	"sqlite/stmts.go":         "database/sql statement cache and the write transaction type; pgx caches statements itself",
	"sqlite/turn.go":          "orders the writers of SQLite's single write connection; PostgreSQL has a pool",
	"sqlite/turn_test.go":     "tests turn.go",
}

// TestEngineFoldersMirrorEachOther fails when a file exists in one engine folder and not the other,
// unless engineOnly names it.
func TestEngineFoldersMirrorEachOther(t *testing.T) {
	engines := []string{"sqlite", "postgres"}
	files := map[string][]string{}
	for _, e := range engines {
		entries, err := os.ReadDir(e)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range entries {
			if !f.IsDir() {
				files[e] = append(files[e], f.Name())
			}
		}
	}
	for i, e := range engines {
		other := engines[1-i]
		for _, name := range files[e] {
			if _, ok := engineOnly[e+"/"+name]; ok {
				continue
			}
			if !slices.Contains(files[other], name) {
				t.Errorf("db/%s/%s has no db/%s/%s: give the counterpart the same name, or add it to engineOnly with the reason", e, name, other, name)
			}
		}
	}
	for path := range engineOnly {
		if _, err := os.Stat(path); err != nil {
			t.Errorf("engineOnly lists %s, which does not exist: remove it from the list", path)
		}
	}
}

// statusLiteral matches a status, pause kind or event type written as an SQL literal.
var statusLiteral = regexp.MustCompile(`'(queued|running|paused|completed|failed|cancelled|approval|loop|recovery|(run|node|gate|loop|session|workspace|resume)_[a-z_]+)'`)

// tableNames are quoted names statusLiteral matches that name a table, not a status or event type
// (PostgreSQL's pg_get_serial_sequence takes the table's name as a string).
var tableNames = map[string]bool{"'run_outbox'": true}

// TestEnginesSpellNoStatus: the engines' SQL names no status, pause kind or event type of its own;
// the conditions that keep them are rendered by package db from Transitions and the Go constants
// (sqlupdate.go, sqlclaims.go), so an engine cannot disagree with the state machine.
func TestEnginesSpellNoStatus(t *testing.T) {
	for _, e := range []string{"sqlite", "postgres"} {
		files, err := filepath.Glob(filepath.Join(e, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range statusLiteral.FindAllString(string(b), -1) {
				if tableNames[m] {
					continue
				}
				t.Errorf("db/%s writes %s: render the condition in package db (from the Go constant)", f, m)
			}
		}
	}
}
