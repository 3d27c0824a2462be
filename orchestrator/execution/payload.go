package execution

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"threadflow/workflow"
)

// PayloadFile is where a run started by a delivery (a webhook, a GitHub event) finds its body:
// beside its working directory, in the run's own directory, readable by the bot's user only.
func PayloadFile(workingPath string) string {
	return filepath.Join(filepath.Dir(workingPath), "trigger-payload.json")
}

// writePayload writes the payload of the delivery that started the run to PayloadFile, on whichever
// replica executes it (the payload is kept in the database with its fire), and remembers the path
// for $TRIGGER_PAYLOAD_FILE. Runs a person started have none.
func (e *execution) writePayload(ctx context.Context) error {
	if !strings.HasPrefix(e.run.UserID, workflow.RequesterPrefix) {
		return nil
	}
	payload, found, err := e.x.Store.FirePayload(ctx, e.run.ID)
	if err != nil || !found {
		return err
	}
	path := PayloadFile(e.run.WorkingPath)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("write the trigger payload of run %s: %w", e.run.ID, err)
	}
	if err := os.WriteFile(path, payload, 0o600); err != nil {
		return fmt.Errorf("write the trigger payload of run %s: %w", e.run.ID, err)
	}
	e.payload = path
	return nil
}

// agentEnv is what an agent CLI gets beyond its own environment: the run's marker, and the
// payload's file when a delivery started the run.
func (e *execution) agentEnv() []string {
	env := []string{runMarker(e.run.ID)}
	if e.payload != "" {
		env = append(env, workflow.PayloadFileEnv+"="+e.payload)
	}
	return env
}
