package test

import "fmt"

// gateWorkflows are the workflows of the gate tests, for a platform whose three approvers have
// the given platform-qualified ids. guarded needs two of them, never its requester; timed waits two
// seconds and reminds once after one.
func gateWorkflows(alice, bob, carol string) map[string]string {
	return map[string]string{
		"guarded.yaml": fmt.Sprintf(`name: guarded
description: Ships only after two listed approvers other than the requester agree.
nodes:
  - id: check
    bash: echo "checked $ARGUMENTS"
  - id: confirm
    depends_on: [check]
    approval:
      message: Ship $ARGUMENTS?
      capture_response: true
      approvers: [%q, %q, %q]
      allow_self_approval: false
      required_approvals: 2
  - id: ship
    depends_on: [confirm]
    bash: |
      printf 'shipped %%s with notes [%%s]\n' "$ARGUMENTS" "$confirm.output"
`, alice, bob, carol),
		"timed.yaml": `name: timed
description: Waits two seconds for an answer, reminding once after one.
nodes:
  - id: confirm
    approval:
      message: Anyone there?
      timeout: 2s
      remind_after: 1s
  - id: after
    depends_on: [confirm]
    bash: echo "answered in time"
`,
	}
}
