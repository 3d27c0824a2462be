// Package workflow owns Threadflow's workflow definitions: the YAML format, its validation with
// file:line:col errors that say how to fix each problem, the DAG checks, the `when` expression
// language, variable substitution for prompts and shell scripts, the trigger rules that decide
// whether a node runs, discovery of workflow files, and the bundled default workflows.
//
// The package is pure: it reads files during discovery but never touches a database and never
// runs a process. The orchestrator executes a Workflow using the API here.
package workflow
