package dispatch

import (
	"context"
	"testing"
)

// A burst of free-text chat starts at most maxAssistantTurns agent CLIs: the next answer waits for
// one to finish, and gets its turn as soon as one does.
func TestAssistantWritesAtMostEightAnswersAtOnce(t *testing.T) {
	a := &Assistant{}
	ctx := context.Background()
	var releases []func()
	for range maxAssistantTurns {
		release, err := a.turn(ctx)
		if err != nil {
			t.Fatalf("turn %d of %d: %v", len(releases)+1, maxAssistantTurns, err)
		}
		releases = append(releases, release)
	}
	stopped, stop := context.WithCancel(ctx)
	stop() // the full bound leaves the wait nothing but ctx
	if _, err := a.turn(stopped); err == nil {
		t.Fatalf("answer %d got a turn while %d were being written", maxAssistantTurns+1, maxAssistantTurns)
	}
	releases[0]()
	release, err := a.turn(ctx)
	if err != nil {
		t.Fatalf("no turn after one ended: %v", err)
	}
	release()
}
