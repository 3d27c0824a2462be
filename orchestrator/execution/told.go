package execution

import (
	"strings"

	"threadflow/db"
)

// Told says a notification (a notified event) for people: what happened, and who was left out and
// why, for the run page's History and /workflow status alike.
func Told(d db.NotifiedData) (what, note string) {
	how := map[string]string{db.NotifyMention: "mentioned", db.NotifyDM: "sent a direct message"}[d.How]
	if how == "" {
		how = "told"
	}
	about := map[string]string{"gate": "the gate", "reminder": "the reminder", "escalation": "the escalation",
		"decision": "the gate's decision", "end": "the run's end"}[d.About]
	if about == "" {
		about = d.About
	}
	who := strings.Join(d.To, ", ")
	if who == "" {
		who = "nobody"
	}
	what = who + " " + how + " about " + about
	var notes []string
	if len(d.Skipped) > 0 {
		notes = append(notes, "not reached: "+strings.Join(d.Skipped, ", ")+" (they take no direct messages from the bot)")
	}
	if d.Why != "" {
		notes = append(notes, d.Why)
	}
	return what, strings.Join(notes, "; ")
}

// Escalated names who a gate escalated to.
func Escalated(d db.GateEscalatedData) string {
	who := strings.Join(d.To, ", ")
	if d.Admins {
		who = strings.TrimPrefix(who+" and the admins (ADMIN_USER_IDS)", " and ")
	}
	return who
}
