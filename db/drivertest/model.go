package drivertest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"

	"threadflow/db"
)

// matches is the guard of u as RunUpdate documents it, evaluated on the run as it was (found is
// false when there was no such run). The pause columns are the run's Meta.Pause: a pause writes
// both, and leaving it clears both.
func matches(r db.Run, found bool, u db.RunUpdate) bool {
	if !found || r.ID != u.RunID || !slices.Contains(u.From, r.Status) {
		return false
	}
	if u.Leased && (r.LeaseToken == "" || r.LeaseToken != u.Token) {
		return false
	}
	if len(u.IfPaused) > 0 && r.Status == db.StatusPaused && !slices.Contains(u.IfPaused, pauseKind(r)) {
		return false
	}
	if u.PauseNode != "" && pauseNode(r) != u.PauseNode {
		return false
	}
	if !u.ExpiredBefore.IsZero() &&
		(r.LeaseExpiresAt.IsZero() || !r.LeaseExpiresAt.Before(u.ExpiredBefore) || r.Recoveries != u.Recoveries) {
		return false
	}
	return true
}

func pauseKind(r db.Run) db.PauseKind {
	if r.Meta.Pause == nil {
		return ""
	}
	return r.Meta.Pause.Kind
}

func pauseNode(r db.Run) string {
	if r.Meta.Pause == nil {
		return ""
	}
	return r.Meta.Pause.Node
}

// apply is the run after s, as RunSet documents each field.
func apply(r db.Run, s db.RunSet) db.Run {
	prev := r.Status
	if s.Status != "" {
		r.Status = s.Status
	}
	if s.Lease != nil {
		r.LeaseOwner, r.LeaseToken = s.Lease.Owner, s.Lease.Token
	}
	r.LeaseExpiresAt = orKeep(s.ExpiresAt, r.LeaseExpiresAt)
	r.HeartbeatAt = orKeep(s.HeartbeatAt, r.HeartbeatAt)
	if r.StartedAt.IsZero() {
		r.StartedAt = s.StartedAt
	}
	switch {
	case s.DropLease:
		r.LeaseOwner, r.LeaseToken, r.LeaseExpiresAt = "", "", time.Time{}
	case s.EndLease:
		r.LeaseExpiresAt = time.Time{}
	}
	if s.LeavePause {
		r.Meta.Pause = nil
	}
	r.QueuedAt = orKeep(s.QueuedAt, r.QueuedAt)
	r.FinishedAt = orKeep(s.FinishedAt, r.FinishedAt)
	if s.Reopen {
		r.FinishedAt = time.Time{}
	}
	if s.NextAttempt {
		r.Attempt++
	}
	if s.Recovered {
		r.Recoveries++
	}
	if w := s.Workspace; w != nil {
		r.WorkingPath, r.WorkspaceHome, r.WorkspaceRemote = w.Path, w.Home, w.Remote
	}
	if s.ForgetWorkspace {
		r.WorkspaceHome, r.WorkspaceRemote = "", ""
	}
	r.Meta = mergeMeta(r.Meta, s.Meta)
	if s.ResumedFrom {
		r.Meta.ResumedFrom = prev
	}
	return r
}

func orKeep(set, old time.Time) time.Time {
	if set.IsZero() {
		return old
	}
	return set
}

// mergeMeta is old with each non-empty top-level field of patch replacing its own.
func mergeMeta(old, patch db.Meta) db.Meta {
	fields := map[string]json.RawMessage{}
	mustUnmarshal(db.MustJSON(old), &fields)
	var p map[string]json.RawMessage
	mustUnmarshal(db.MustJSON(patch), &p)
	for k, v := range p {
		fields[k] = v
	}
	var out db.Meta
	mustUnmarshal(db.MustJSON(fields), &out)
	return out
}

func mustUnmarshal(b []byte, v any) {
	if err := json.Unmarshal(b, v); err != nil {
		panic(fmt.Sprintf("drivertest: %v", err)) // db.Meta always round-trips
	}
}

// diff lists the fields in which got differs from want: times by instant, meta as JSON.
func diff(want, got db.Run) []string {
	var out []string
	wv, gv := reflect.ValueOf(want), reflect.ValueOf(got)
	for i := range wv.NumField() {
		name := wv.Type().Field(i).Name
		w, g := wv.Field(i).Interface(), gv.Field(i).Interface()
		same := reflect.DeepEqual(w, g)
		switch v := w.(type) {
		case time.Time:
			same = v.Equal(g.(time.Time))
		case db.Meta:
			same = jsonEqual(db.MustJSON(v), db.MustJSON(g))
			w, g = string(db.MustJSON(v)), string(db.MustJSON(g))
		case []byte:
			same = string(v) == string(g.([]byte))
		}
		if !same {
			out = append(out, fmt.Sprintf("%s: want %v, got %v", name, w, g))
		}
	}
	return out
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}
