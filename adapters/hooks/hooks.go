// Package hooks serves POST /hooks/<workflow>/<name>: the deliveries of the workflows' webhook and
// GitHub triggers. Every check (the trigger exists, its secret is set, the body's size, the
// signature and its time) is made before anything is written; a delivery that passes them is one
// fire (maintenance.Triggers), de-duplicated by its delivery id.
package hooks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"threadflow/db"
	"threadflow/orchestrator/maintenance"
	"threadflow/workflow"
)

// Limits of a delivery.
const (
	MaxBody       = 1 << 20         // bytes of a body
	MaxClockSkew  = 5 * time.Minute // how far X-Threadflow-Timestamp may be from now, either way
	maxDeliveryID = 200
)

// Headers of a Threadflow webhook delivery, and of GitHub's.
const (
	HeaderTimestamp = "X-Threadflow-Timestamp"
	HeaderSignature = "X-Threadflow-Signature"
	HeaderDelivery  = "X-Threadflow-Delivery"
	HeaderEvent     = "X-Threadflow-Event"
	HeaderGitHubSig = "X-Hub-Signature-256"
	HeaderGitHubID  = "X-GitHub-Delivery"
	HeaderGitHubEvt = "X-GitHub-Event"
)

// Firer fires a trigger (maintenance.Triggers).
type Firer interface {
	Fire(ctx context.Context, wf *workflow.Workflow, tr *workflow.Trigger, d maintenance.Delivery) (db.FireResult, error)
}

// Handler serves the deliveries.
type Handler struct {
	Catalogs maintenance.Catalogs
	Fire     Firer
	Secrets  *Secrets
	Log      *zap.Logger
	Observe  maintenance.TriggerObserver // optional
	Now      func() time.Time            // nil: time.Now
}

// Pattern is where Handler is mounted.
const Pattern = "POST /hooks/{workflow}/{name}"

// refusal is a delivery refused before anything was written.
type refusal struct {
	status int
	reason string // for the log and the metric: unknown, no_secret, too_large, bad_signature, stale, ...
	msg    string // for the sender
}

// ServeHTTP handles one delivery.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	wfName, name := r.PathValue("workflow"), r.PathValue("name")
	wf, tr := h.find(wfName, name)
	label := ""
	if tr != nil {
		label = tr.ID(wf.Name)
	}
	d, ref := h.delivery(w, r, tr)
	if ref != nil {
		h.refuse(w, label, ref)
		return
	}
	if tr.Kind == workflow.TriggerGitHub && !tr.Matches(d.Event) {
		h.Log.Info("hooks.delivery_ignored", zap.String("trigger", label), zap.String("event", d.Event))
		writeJSON(w, http.StatusAccepted, map[string]any{"ignored": true, "event": d.Event,
			"reason": "this trigger does not start on " + d.Event})
		return
	}
	res, err := h.Fire.Fire(r.Context(), wf, tr, d)
	var argsErr *maintenance.ArgsError
	switch {
	case errors.As(err, &argsErr):
		h.refuse(w, label, &refusal{http.StatusUnprocessableEntity, "bad_args", argsErr.Msg})
		return
	case err != nil:
		h.Log.Error("hooks.fire_failed", zap.String("trigger", label), zap.Error(err))
		writeJSON(w, http.StatusInternalServerError, map[string]any{"error": "the delivery could not be recorded; send it again"})
		return
	}
	f := res.Fire
	if f.Outcome == db.FireRefused {
		h.refuseBusy(w, label, d, res)
		return
	}
	h.Log.Info("hooks.delivery_accepted", zap.String("trigger", label), zap.String("event", d.Event), zap.Bool("duplicate", !res.Created),
		zap.String("outcome", string(f.Outcome)), zap.String("run_id", f.RunID))
	status := http.StatusAccepted
	if !res.Created {
		status = http.StatusOK
	}
	body := map[string]any{"duplicate": !res.Created, "outcome": f.Outcome, "reason": f.Reason, "run_id": f.RunID, "event": d.Event}
	if p := res.Place; p.Waiting() {
		body["group"], body["holder_run_id"], body["place"] = p.Group, p.Holder, p.Place
	}
	writeJSON(w, status, body)
}

// refuseBusy answers a delivery whose run its concurrency group refused (when_busy: refuse): the
// fire is recorded (refused, naming the holder), so a redelivery gets the same answer, and the
// sender is told 409 with the group and the run holding it.
func (h *Handler) refuseBusy(w http.ResponseWriter, trigger string, d maintenance.Delivery, res db.FireResult) {
	f := res.Fire
	h.Log.Info("hooks.delivery_refused_group_busy", zap.String("trigger", trigger), zap.String("event", d.Event), zap.Bool("duplicate", !res.Created),
		zap.String("group", f.Group), zap.String("holder", f.Holder))
	writeJSON(w, http.StatusConflict, map[string]any{"duplicate": !res.Created, "outcome": f.Outcome, "reason": f.Reason, "event": d.Event,
		"group": f.Group, "holder_run_id": f.Holder,
		"error": fmt.Sprintf("nothing was started: run %s holds concurrency group %s and the workflow says when_busy: refuse; a new delivery once that run ends can start one (this one stays refused)", f.Holder, f.Group)})
}

// find is the webhook or GitHub trigger name of the workflow wfName; nils when there is none.
func (h *Handler) find(wfName, name string) (*workflow.Workflow, *workflow.Trigger) {
	wf, ok := h.Catalogs.Catalog().Get(wfName)
	if !ok {
		return nil, nil
	}
	tr := wf.Trigger(name)
	if tr == nil || tr.Kind == workflow.TriggerSchedule {
		return nil, nil
	}
	return wf, tr
}

// delivery checks a delivery for tr in order (known, enabled, size, signature, time) and reads it.
func (h *Handler) delivery(w http.ResponseWriter, r *http.Request, tr *workflow.Trigger) (maintenance.Delivery, *refusal) {
	if tr == nil {
		return maintenance.Delivery{}, &refusal{http.StatusNotFound, "unknown", "no webhook or GitHub trigger has this address; it is /hooks/<workflow>/<trigger name>"}
	}
	secret := h.Secrets.Get(tr.SecretEnv)
	if secret == "" {
		return maintenance.Delivery{}, &refusal{http.StatusServiceUnavailable, "no_secret",
			fmt.Sprintf("this trigger is disabled: the bot's environment does not set %s, its secret", tr.SecretEnv)}
	}
	if r.ContentLength > MaxBody {
		return maintenance.Delivery{}, tooLarge()
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return maintenance.Delivery{}, tooLarge()
	case err != nil:
		return maintenance.Delivery{}, &refusal{http.StatusBadRequest, "unreadable", "the body could not be read"}
	}
	var (
		d   maintenance.Delivery
		ref *refusal
	)
	if tr.Kind == workflow.TriggerGitHub {
		d, ref = githubDelivery(r.Header, body, secret)
	} else {
		d, ref = h.webhookDelivery(r.Header, body, secret, tr.Name)
	}
	if ref != nil {
		return d, ref
	}
	d.Payload = body
	return d, decode(&d, body, tr)
}

func tooLarge() *refusal {
	return &refusal{http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the body is over %d bytes", MaxBody)}
}

// webhookDelivery checks X-Threadflow-Signature = sha256=hex(HMAC-SHA256(secret, timestamp + "." +
// body)) and that the timestamp is within MaxClockSkew of now.
func (h *Handler) webhookDelivery(hd http.Header, body []byte, secret, name string) (maintenance.Delivery, *refusal) {
	ts := hd.Get(HeaderTimestamp)
	sent, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return maintenance.Delivery{}, &refusal{http.StatusUnauthorized, "bad_timestamp", HeaderTimestamp + " must be the time of sending in Unix seconds"}
	}
	mac, ok := signature(hd.Get(HeaderSignature))
	if !ok || !hmac.Equal(mac, Sign(secret, []byte(ts+"."), body)) {
		return maintenance.Delivery{}, &refusal{http.StatusUnauthorized, "bad_signature",
			HeaderSignature + " must be sha256=<hex of HMAC-SHA256(secret, timestamp + \".\" + body)>"}
	}
	if skew := h.now().Sub(time.Unix(sent, 0)); skew > MaxClockSkew || skew < -MaxClockSkew {
		return maintenance.Delivery{}, &refusal{http.StatusUnauthorized, "stale", HeaderTimestamp + " is more than 5 minutes from the bot's clock"}
	}
	id := hd.Get(HeaderDelivery)
	if id == "" {
		id = "signature:" + hex.EncodeToString(mac) // a replay within the window carries the same one
	} else if !validDeliveryID(id) {
		return maintenance.Delivery{}, &refusal{http.StatusBadRequest, "bad_delivery", HeaderDelivery + " must be 1 to 200 printable characters"}
	}
	event := hd.Get(HeaderEvent)
	if event == "" {
		event = name
	} else if !validDeliveryID(event) || len(event) > 64 {
		return maintenance.Delivery{}, &refusal{http.StatusBadRequest, "bad_event", HeaderEvent + " must be 1 to 64 printable characters"}
	}
	return maintenance.Delivery{Key: db.DeliveryKey(id), Event: event}, nil
}

// githubDelivery checks X-Hub-Signature-256 = sha256=hex(HMAC-SHA256(secret, body)) and reads the
// event: X-GitHub-Event, then "." and the payload's action when it has one.
func githubDelivery(hd http.Header, body []byte, secret string) (maintenance.Delivery, *refusal) {
	mac, ok := signature(hd.Get(HeaderGitHubSig))
	if !ok || !hmac.Equal(mac, Sign(secret, nil, body)) {
		return maintenance.Delivery{}, &refusal{http.StatusUnauthorized, "bad_signature", HeaderGitHubSig + " does not match the body and this trigger's secret"}
	}
	id, event := hd.Get(HeaderGitHubID), hd.Get(HeaderGitHubEvt)
	if !validDeliveryID(id) || !validDeliveryID(event) || len(event) > 64 {
		return maintenance.Delivery{}, &refusal{http.StatusBadRequest, "bad_delivery", HeaderGitHubID + " and " + HeaderGitHubEvt + " must be set, as GitHub sends them"}
	}
	return maintenance.Delivery{Key: db.DeliveryKey(id), Event: event}, nil
}

// decode reads the body as JSON for the trigger's args, adding a GitHub payload's action to the
// event. A body that is not JSON is refused when the trigger reads it (GitHub's always is).
func decode(d *maintenance.Delivery, body []byte, tr *workflow.Trigger) *refusal {
	if len(bytes.TrimSpace(body)) == 0 && tr.Kind != workflow.TriggerGitHub {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if tr.Kind == workflow.TriggerGitHub || tr.Args.UsesPayload() {
			return &refusal{http.StatusBadRequest, "not_json", "the body is not JSON, and this trigger reads it"}
		}
		return nil
	}
	d.Decoded = v
	if m, ok := v.(map[string]any); ok && tr.Kind == workflow.TriggerGitHub {
		if action, ok := m["action"].(string); ok && action != "" && len(action) <= 64 {
			d.Event += "." + action
		}
	}
	return nil
}

// Sign is HMAC-SHA256(secret, prefix + body).
func Sign(secret string, prefix, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(prefix)
	m.Write(body)
	return m.Sum(nil)
}

// signature reads "sha256=<hex>".
func signature(h string) ([]byte, bool) {
	hexed, ok := strings.CutPrefix(h, "sha256=")
	if !ok {
		return nil, false
	}
	mac, err := hex.DecodeString(hexed)
	return mac, err == nil && len(mac) == sha256.Size
}

func validDeliveryID(s string) bool {
	if s == "" || len(s) > maxDeliveryID {
		return false
	}
	for i := range len(s) {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// refuse answers a refused delivery and logs it: the trigger, the status and the reason, never the
// secret, a signature or the body.
func (h *Handler) refuse(w http.ResponseWriter, trigger string, ref *refusal) {
	h.Log.Warn("hooks.delivery_refused", zap.String("trigger", trigger), zap.Int("status", ref.status), zap.String("reason", ref.reason))
	if h.Observe != nil {
		h.Observe.TriggerRefused(trigger, ref.reason)
	}
	writeJSON(w, ref.status, map[string]any{"error": ref.msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil { // maps of strings and numbers always encode
		b, status = []byte(`{"error":"internal error"}`), http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
