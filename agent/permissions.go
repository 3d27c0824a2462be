package agent

import (
	"fmt"
	"strings"
)

// Permissions is what an agent turn may do to the host. It is decided here, in one place, and
// mapped to each CLI's own flags (docs/workflows.md has the table).
type Permissions string

// The permission levels.
const (
	// PermRead lets the agent read files and answer; it changes nothing.
	PermRead Permissions = "read"
	// PermEdit lets the agent change files in its working directory. Codex may also run commands
	// inside its workspace-write sandbox; Claude Code, which has no such sandbox, may not run Bash.
	PermEdit Permissions = "edit"
	// PermFull lets the agent do anything the bot's user may, without a sandbox. The operator must
	// allow it with AGENT_ALLOW_FULL=true.
	PermFull Permissions = "full"
)

// DefaultPermissions is used when neither the node nor AGENT_PERMISSIONS says.
const DefaultPermissions = PermEdit

// PermissionLevels lists the valid values, for validation messages.
var PermissionLevels = []string{string(PermRead), string(PermEdit), string(PermFull)}

// ParsePermissions reads a permission level; "" means DefaultPermissions.
func ParsePermissions(s string) (Permissions, error) {
	switch p := Permissions(strings.TrimSpace(s)); p {
	case "":
		return DefaultPermissions, nil
	case PermRead, PermEdit, PermFull:
		return p, nil
	}
	return "", fmt.Errorf("%q is not a permission level: use one of %s", s, strings.Join(PermissionLevels, ", "))
}

// claudePermissionArgs maps a level to Claude Code's flags. Print mode cannot ask anyone, so every
// tool outside the allowed set is denied and reported in the result's permission_denials.
func claudePermissionArgs(p Permissions) []string {
	const readTools = "Read,Glob,Grep,LS,WebSearch,WebFetch,TodoWrite,Task"
	switch p {
	case PermRead:
		return []string{"--permission-mode", "dontAsk", "--allowedTools", readTools}
	case PermFull:
		return []string{"--permission-mode", "bypassPermissions"}
	}
	return []string{"--permission-mode", "acceptEdits", "--allowedTools", readTools + ",Edit,MultiEdit,Write,NotebookEdit"}
}

// codexPermissionArgs maps a level to Codex's sandbox. Approval is never asked for (there is no
// one to ask): a command the sandbox refuses fails and the model is told so.
func codexPermissionArgs(p Permissions) (global, exec []string) {
	global = []string{"--ask-for-approval", "never"}
	switch p {
	case PermRead:
		return global, []string{"--sandbox", "read-only"}
	case PermFull:
		return global, []string{"--sandbox", "danger-full-access"}
	}
	return global, []string{"--sandbox", "workspace-write"}
}
