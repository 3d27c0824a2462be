package execution

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"

	"go.uber.org/zap"

	"threadflow/workflow"
)

// typedMeta is <id>.meta.json beside a typed output (Archon's output_type sidecar).
type typedMeta struct {
	NodeID     string `json:"node_id"`
	OutputType string `json:"output_type"`
	RunID      string `json:"run_id"`
	Bytes      int64  `json:"bytes"`
	CreatedAt  string `json:"created_at"`
}

// keepTyped writes the output of a node that declares an output type as
// $ARTIFACTS_DIR/nodes/<id>.md with <id>.meta.json beside it, so other nodes and people find
// outputs by type. As in Archon it is best effort: a failure is logged and the node still succeeds.
func (e *execution) keepTyped(n *workflow.Node, out NodeOutput) {
	if n.OutputType == "" {
		return
	}
	if err := e.writeTyped(n, out); err != nil {
		e.x.Log.Warn("orchestrator.typed_output_not_written", zap.String("run_id", e.run.ID), zap.String("node", n.ID), zap.Error(err))
	}
}

func (e *execution) writeTyped(n *workflow.Node, out NodeOutput) error {
	dir := filepath.Join(e.artifactsDir(), "nodes")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	body := []byte(out.Text)
	if out.File != "" {
		b, err := os.ReadFile(out.File)
		if err != nil {
			return err
		}
		body = b
	}
	meta, err := json.MarshalIndent(typedMeta{NodeID: n.ID, OutputType: n.OutputType, RunID: e.run.ID,
		Bytes: int64(len(body)), CreatedAt: e.x.now().UTC().Format("2006-01-02T15:04:05Z")}, "", "  ")
	if err != nil {
		return err
	}
	return errors.Join(os.WriteFile(filepath.Join(dir, n.ID+".md"), body, 0o644),
		os.WriteFile(filepath.Join(dir, n.ID+".meta.json"), append(meta, '\n'), 0o644))
}
