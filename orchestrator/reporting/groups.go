package reporting

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"

	"threadflow/commands"
	"threadflow/conversation"
	"threadflow/db"
)

// The texts about typed inputs and concurrency groups, shared by chat, the terminal and the
// dashboard.

// Ordinal writes n as 1st, 2nd, 3rd, 4th, ...
func Ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}

// WaitingText says that a run waits for its concurrency group, who holds it and the run's place.
func WaitingText(runID string, p db.GroupPlace) conversation.Text {
	cancel := commands.Command{Kind: commands.KindCancel, RunID: runID}.String()
	return conversation.T(conversation.P("⏳ Waiting for concurrency group "), conversation.C(p.Group), conversation.P(": run "),
		conversation.C(p.Holder), conversation.P(" holds it, and this run is "+Ordinal(p.Place)+" in line. It starts when the runs ahead of it end; "),
		conversation.C(cancel), conversation.P(" takes it out of line."))
}

// statusButton is the button that shows a run's status.
func statusButton(runID string) conversation.Button {
	return conversation.Button{Label: "Status", Command: commands.Command{Kind: commands.KindStatus, RunID: runID}.String()}
}

// refGroup is the message kind of a waiting run's note about its place in line: edited as the
// line moves.
const refGroup = "group"

// GroupNotes is what a run waiting for its concurrency group owes (db.GroupNotes): created waiting,
// the note with its place in its thread after its announcement; as the line moves, that note
// edited to its new place, or to say the group is the run's now.
func (r *Reporter) GroupNotes(runID string, p db.GroupPlace, moved bool) []db.Owed {
	if !moved {
		return []db.Owed{owed("note", owedKey(runID, refGroup, "waiting"), db.TargetThread, refGroup,
			conversation.Reply{Text: WaitingText(runID, p), Buttons: []conversation.Button{statusButton(p.Holder)}})}
	}
	rep := conversation.Reply{Text: WaitingText(runID, p), Buttons: []conversation.Button{statusButton(p.Holder)}}
	if !p.Waiting() {
		rep = conversation.Reply{Text: conversation.T(conversation.P("▶ Concurrency group "), conversation.C(p.Group),
			conversation.P(" is this run's now: it starts."))}
	}
	o := owed("note", owedKey(runID, refGroup, "edit"), db.TargetEdit, refGroup, rep)
	o.Replace = true // the latest place wins
	return []db.Owed{o}
}

// GroupBusyText refuses a run whose group another run holds (when_busy: refuse), naming the holder
// and its state.
func GroupBusyText(workflow string, busy *db.GroupBusyError, holder db.Run) (conversation.Text, []conversation.Button) {
	t := conversation.T(conversation.P("Nothing was started: "), conversation.C(workflow), conversation.P(" runs one at a time in concurrency group "),
		conversation.C(busy.Group), conversation.P(", and run "), conversation.C(busy.Holder), conversation.P(" holds it"))
	if holder.ID != "" {
		t = t.Append(conversation.P(" ("+string(holder.Status)+", started by "), Requester(holder).Span(), conversation.P(")"))
	}
	status := commands.Command{Kind: commands.KindStatus, RunID: busy.Holder}.String()
	return t.Append(conversation.P(". "), conversation.C(status), conversation.P(" shows it; try again once it ends.")), []conversation.Button{statusButton(busy.Holder)}
}

// GroupReader is the part of the store the group texts read.
type GroupReader interface {
	GroupPlace(ctx context.Context, runID string) (db.GroupPlace, error)
}

// GroupLine says where a run of a concurrency group stands: "" when it has none, "holds group g",
// or "waiting for group g: 2nd in line behind H".
func GroupLine(ctx context.Context, s GroupReader, r db.Run) (conversation.Text, error) {
	if r.Group == "" || r.Status.Terminal() {
		return nil, nil
	}
	p, err := s.GroupPlace(ctx, r.ID)
	if errors.Is(err, db.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !p.Waiting() {
		return conversation.T(conversation.P("holds concurrency group "), conversation.C(p.Group)), nil
	}
	return conversation.T(conversation.P("waiting for concurrency group "), conversation.C(p.Group), conversation.P(": "+Ordinal(p.Place)+" in line behind "),
		conversation.C(p.Holder)), nil
}

// InputsText lists a run's inputs, name=value, in name order; nil when it has none.
func InputsText(in map[string]string) conversation.Text {
	if len(in) == 0 {
		return nil
	}
	t := conversation.T(conversation.P("Inputs: "))
	for i, n := range slices.Sorted(maps.Keys(in)) {
		if i > 0 {
			t = t.Append(conversation.P(", "))
		}
		t = t.Append(conversation.C(n+"="), conversation.U(conversation.Preview(in[n], 80)))
	}
	return t
}
