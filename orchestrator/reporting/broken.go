package reporting

import (
	"fmt"
	"strings"
	"time"

	"threadflow/conversation"
	"threadflow/workflow"
)

// brokenShown is how many problems of a broken workflow file a reply lists; `bot workflow
// validate` prints them all.
const brokenShown = 5

// CatalogReload is how often the bot re-reads workflow files (docs/workflows.md, "Reloading"): a
// new, changed or fixed file is picked up within it, without a restart.
const CatalogReload = 2 * time.Second

// CatalogReloadText says so in messages.
var CatalogReloadText = fmt.Sprintf("workflow files are re-read every %s", CatalogReload)

// BrokenWorkflowText answers a run of a workflow whose file failed validation: the problems with
// file:line:col, and how to check the fix, instead of "there is no workflow named".
func BrokenWorkflowText(name string, probs workflow.Errors) conversation.Text {
	t := conversation.T(conversation.P("The workflow "), conversation.C(name), conversation.P(" cannot run: its file is not valid.\n"))
	lines := make([]string, 0, brokenShown)
	for _, p := range probs[:min(len(probs), brokenShown)] {
		lines = append(lines, p.Error())
	}
	if extra := len(probs) - brokenShown; extra > 0 {
		lines = append(lines, fmt.Sprintf("(%d more)", extra))
	}
	t = t.Append(conversation.Block(strings.Join(lines, "\n")))
	return t.Append(conversation.P("Fix the file and run it again ("+CatalogReloadText+"); "),
		conversation.C("bot workflow validate "+probs[0].File), conversation.P(" checks it."))
}
