package hooks_test

import (
	"context"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"threadflow/adapters/hooks"
	"threadflow/db"
	"threadflow/orchestrator/maintenance"
	"threadflow/workflow"
)

type catalog struct{ c *workflow.Catalog }

func (c catalog) Catalog() *workflow.Catalog { return c.c }

// recorder stands in for maintenance.Triggers: it records what reached it (nothing, for a refusal).
type recorder struct {
	got []maintenance.Delivery
	res *db.FireResult // what the store recorded; a started fire of run0000001 when nil
}

func (r *recorder) Fire(_ context.Context, _ *workflow.Workflow, _ *workflow.Trigger, d maintenance.Delivery) (db.FireResult, error) {
	r.got = append(r.got, d)
	if r.res != nil {
		return *r.res, nil
	}
	return db.FireResult{Created: true, Fire: db.TriggerFire{Outcome: db.FireStarted, RunID: "run0000001"}}, nil
}

// TestDeliveriesAreCheckedBeforeTheyFire: every refusal answers before the delivery reaches the
// trigger, with the status the docs give; a good delivery reaches it once with its key and event.
func TestDeliveriesAreCheckedBeforeTheyFire(t *testing.T) {
	dir := t.TempDir()
	src := "name: deploy\ntriggers:\n  - webhook: {name: go, secret_env: HOOKS_TEST_SECRET, post_to: web, args: \"${{ payload.ref }}\"}\n" +
		"  - webhook: {name: off, secret_env: HOOKS_TEST_UNSET, post_to: web}\n  - schedule: {name: tick, cron: \"@daily\", post_to: web}\n" +
		"nodes:\n  - id: a\n    bash: echo\n"
	if err := os.WriteFile(filepath.Join(dir, "deploy.yaml"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cat, errs := workflow.Discover("", []string{dir})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	now := time.Unix(1_800_000_000, 0)
	rec := &recorder{}
	env := map[string]string{"HOOKS_TEST_SECRET": "k"}
	h := &hooks.Handler{Catalogs: catalog{cat}, Fire: rec, Log: zap.NewNop(), Now: func() time.Time { return now },
		Secrets: &hooks.Secrets{Getenv: func(k string) string { return env[k] }}}
	mux := http.NewServeMux()
	mux.Handle(hooks.Pattern, h)
	sign := func(at time.Time, body string) map[string]string {
		ts := strconv.FormatInt(at.Unix(), 10)
		return map[string]string{hooks.HeaderTimestamp: ts, hooks.HeaderSignature: "sha256=" + hex.EncodeToString(hooks.Sign("k", []byte(ts+"."), []byte(body)))}
	}
	good := `{"ref":"v1"}`
	for _, tc := range []struct {
		name, path, body string
		headers          map[string]string
		status           int
	}{
		{"unknown workflow", "nope/go", good, sign(now, good), 404},
		{"a schedule has no address", "deploy/tick", good, sign(now, good), 404},
		{"secret unset", "deploy/off", good, sign(now, good), 503},
		{"over 1 MiB", "deploy/go", strings.Repeat("x", hooks.MaxBody+1), sign(now, ""), 413},
		{"no timestamp", "deploy/go", good, map[string]string{hooks.HeaderSignature: sign(now, good)[hooks.HeaderSignature]}, 401},
		{"signature of another body", "deploy/go", good, sign(now, `{"ref":"v2"}`), 401},
		{"from the future", "deploy/go", good, sign(now.Add(6*time.Minute), good), 401},
		{"bad delivery id", "deploy/go", good, merge(sign(now, good), hooks.HeaderDelivery, "has space"), 400},
		{"not JSON, and args read it", "deploy/go", "ref=v1", sign(now, "ref=v1"), 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/hooks/"+tc.path, strings.NewReader(tc.body))
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, req)
			if w.Code != tc.status {
				t.Errorf("status %d (%s), want %d", w.Code, w.Body, tc.status)
			}
		})
	}
	if len(rec.got) != 0 {
		t.Fatalf("refused deliveries reached the trigger: %+v", rec.got)
	}
	req := httptest.NewRequest(http.MethodPost, "/hooks/deploy/go", strings.NewReader(good))
	for k, v := range merge(sign(now.Add(-4*time.Minute), good), hooks.HeaderDelivery, "abc-1") {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, req)
	if w.Code != http.StatusAccepted || len(rec.got) != 1 || rec.got[0].Key != "delivery:abc-1" || rec.got[0].Event != "go" || string(rec.got[0].Payload) != good {
		t.Fatalf("good delivery: %d %s %+v", w.Code, w.Body, rec.got)
	}

	// A delivery whose run waits in line for its concurrency group is accepted (202) with its
	// place; one the group refuses is answered 409 naming the group and its holder, as docs say.
	for _, tc := range []struct {
		name   string
		res    db.FireResult
		status int
		want   []string
	}{
		{"in line", db.FireResult{Created: true, Fire: db.TriggerFire{Outcome: db.FireStarted, RunID: "run0000002"},
			Place: db.GroupPlace{Group: "release", Holder: "holder0001", Place: 1}}, http.StatusAccepted,
			[]string{`"outcome":"started"`, `"run_id":"run0000002"`, `"group":"release"`, `"holder_run_id":"holder0001"`, `"place":1`}},
		{"refused", db.FireResult{Created: true, Fire: db.TriggerFire{Outcome: db.FireRefused, Reason: db.ReasonGroupBusy, Group: "release", Holder: "holder0001"}},
			http.StatusConflict, []string{`"outcome":"refused"`, `"reason":"group_busy"`, `"group":"release"`, `"holder_run_id":"holder0001"`, `"duplicate":false`, `"error":"nothing was started: run holder0001 holds concurrency group release`}},
		{"refused, redelivered", db.FireResult{Fire: db.TriggerFire{Outcome: db.FireRefused, Reason: db.ReasonGroupBusy, Group: "release", Holder: "holder0001"}},
			http.StatusConflict, []string{`"outcome":"refused"`, `"duplicate":true`, `"holder_run_id":"holder0001"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec.res = &tc.res
			req := httptest.NewRequest(http.MethodPost, "/hooks/deploy/go", strings.NewReader(good))
			for k, v := range merge(sign(now, good), hooks.HeaderDelivery, "abc-2") {
				req.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, req)
			if w.Code != tc.status {
				t.Errorf("status %d (%s), want %d", w.Code, w.Body, tc.status)
			}
			for _, want := range tc.want {
				if !strings.Contains(w.Body.String(), want) {
					t.Errorf("answer %s lacks %s", w.Body, want)
				}
			}
		})
	}
}

func merge(h map[string]string, k, v string) map[string]string {
	h[k] = v
	return h
}
