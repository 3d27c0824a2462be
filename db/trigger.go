package db

import (
	"strings"
	"time"
)

// FireOutcome is what became of one fire of a trigger.
type FireOutcome string

// Fire outcomes.
const (
	FireStarted FireOutcome = "started" // its run was created with it
	FireSkipped FireOutcome = "skipped" // no run: FireReason says why
	FireWaiting FireOutcome = "waiting" // overlap: queue; its run starts when the previous one ends
	// FireRefused: no run, because its run's concurrency group was held by another run and the
	// workflow says `when_busy: refuse` (reason ReasonGroupBusy; Holder and Group name them).
	FireRefused FireOutcome = "refused"
)

// Why a fire started no run.
const (
	ReasonOverlap        = "overlap"         // the previous run had not ended (overlap: skip)
	ReasonAlreadyWaiting = "already_waiting" // overlap: queue, and a fire waits already
	ReasonMissed         = "missed"          // the bot was down at its time (catch_up: none)
	ReasonGroupBusy      = "group_busy"      // FireRefused: another run held the concurrency group
)

// OverlapRule is what a fire does while a run of an earlier fire of its trigger is active
// (queued, running or paused).
type OverlapRule string

// Overlap rules, as workflow.Overlap spells them.
const (
	OverlapAllow OverlapRule = "allow"
	OverlapSkip  OverlapRule = "skip"
	OverlapQueue OverlapRule = "queue"
)

// MaxPayloadBytes bounds a delivery's payload kept with its fire.
const MaxPayloadBytes = 1 << 20

// Fire asks FireTrigger to record one fire of a trigger and, as Overlap allows, create its run.
type Fire struct {
	Trigger     string    // "<workflow>/<name>"
	Key         string    // unique per trigger: ScheduleKey(t) or DeliveryKey(id)
	Kind        string    // schedule, webhook, github
	Event       string    // a delivery's event ("issues.labeled"); "" for schedules
	ScheduledAt time.Time // schedules: the time it was due
	Overlap     OverlapRule
	Payload     []byte // a delivery's body (at most MaxPayloadBytes); nil for schedules
	Run         NewRun // the run to create (its ID set by the caller)
	// Skip, when set, records the fire as skipped for this reason without looking further.
	Skip string
}

// ScheduleKey is the fire key of a schedule due at t.
func ScheduleKey(t time.Time) string { return "at:" + t.UTC().Format(time.RFC3339Nano) }

// DeliveryKey is the fire key of a delivery with the sender's id.
func DeliveryKey(id string) string { return "delivery:" + id }

// TriggerFire is one recorded fire.
type TriggerFire struct {
	Trigger, Key, Kind, Event string
	ScheduledAt, FiredAt      time.Time
	Outcome                   FireOutcome
	Reason                    string
	RunID                     string
	RunStatus                 Status // of RunID, when listed with it
	// Holder and Group are, for a fire refused because its concurrency group was busy
	// (FireRefused), the run that held the group and the group's name.
	Holder, Group string
}

// FireResult is what FireTrigger did: Fire as recorded, and whether this call recorded it (false:
// another call, perhaps on another replica, had, and Fire is that record).
type FireResult struct {
	Fire    TriggerFire
	Run     Run // the run created with it, when this call created one
	Created bool
	// Place is where Run stands in its concurrency group when this call created it in one (Place
	// 0: it holds the group; n: nth in line); zero when the run has no group.
	Place GroupPlace
}

// How a refused fire is stored. trigger_fires (migration 00013) knows the outcomes started, skipped
// and waiting; a fire refused for a busy concurrency group is stored as skipped with the reason
// "group_busy:<holder run id>:<group>" and read back as FireRefused with Holder and Group, so
// nothing else need change in the table (run ids never hold a colon; a group may).
const storedGroupBusy = ReasonGroupBusy + ":"

// storedFire is the outcome and reason f is stored with.
func storedFire(f TriggerFire) (FireOutcome, string) {
	if f.Outcome == FireRefused {
		return FireSkipped, storedGroupBusy + f.Holder + ":" + f.Group
	}
	return f.Outcome, f.Reason
}

// readFire turns a stored refused fire back into FireRefused with its holder and group.
func readFire(f *TriggerFire) {
	rest, ok := strings.CutPrefix(f.Reason, storedGroupBusy)
	if f.Outcome != FireSkipped || !ok {
		return
	}
	f.Outcome, f.Reason = FireRefused, ReasonGroupBusy
	f.Holder, f.Group, _ = strings.Cut(rest, ":")
}

// TriggerState is what a scheduler needs to know of a trigger: when it was first seen and the
// latest scheduled time a fire was recorded for (zero when none).
type TriggerState struct {
	Trigger       string
	Since         time.Time
	LastScheduled time.Time
	Waiting       bool // a fire waits for the previous run to end
}
