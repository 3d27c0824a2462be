package test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"threadflow/adapters/discord/discordfake"
	"threadflow/db"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// formRelease is a release with typed inputs: a version that must match its pattern as a whole,
// and an environment to choose. Its script writes what it got into $COUNTERS/shipped.
const formRelease = `name: release
description: Ships a version to an environment.
inputs:
  - name: version
    description: the version to ship
    type: string
    pattern: v[0-9]+\.[0-9]+\.[0-9]+
    required: true
  - name: env
    type: choice
    choices: [staging, prod]
    default: staging
nodes:
  - id: ship
    bash: echo "$INPUT_VERSION $INPUT_ENV" > "$COUNTERS/shipped"; echo "shipped $inputs.version"
`

// formEnv is a bot environment (SQLite) whose workflows are formRelease, with COUNTERS for its script.
func formEnv(t *testing.T) (map[string]string, string) {
	t.Helper()
	env := botproc.Env(t)
	counters := t.TempDir()
	env["COUNTERS"] = counters
	return env, counters
}

// shipped waits for the release script to have run and returns what it wrote.
func shipped(t *testing.T, counters string) string {
	t.Helper()
	var got string
	testkit.Eventually(t, "the release script to run", func() bool {
		b, err := os.ReadFile(filepath.Join(counters, "shipped"))
		got = strings.TrimSpace(string(b))
		return err == nil && got != ""
	})
	return got
}

// noRuns checks that no release run was written.
func noRuns(t *testing.T, st db.Store) {
	t.Helper()
	if runs, err := st.ListRuns(context.Background(), db.RunFilter{Workflow: "release"}); err != nil || len(runs) != 0 {
		t.Fatalf("release runs %d, %v; want none written", len(runs), err)
	}
}

// `/workflow run release` without its required version opens a modal with the command's
// trigger_id; a version its pattern refuses comes back as an error on that field, with nothing
// written; a valid submission starts the run in the channel, and its script sees INPUT_VERSION.
func TestSlackRunFormOpensAModalAndStartsTheRun(t *testing.T) {
	env, counters := formEnv(t)
	s := startSlackBot(t, env, map[string]string{"WORKFLOWS_DIR": workflowDir(t, map[string]string{"release.yaml": formRelease})})
	st := openStore(t, env)
	s.fake.SlashCommand(alice, channel, "run release")
	v := s.fake.WaitView(t, 1, testkit.Deadline)
	if v.Title != "Run release" || len(v.Inputs) != 2 {
		t.Fatalf("modal %+v", v)
	}
	version, envIn := v.Inputs[0], v.Inputs[1]
	if version.BlockID != "version" || version.Element != "plain_text_input" || version.Optional || !strings.Contains(version.Hint, "the version to ship") {
		t.Fatalf("version field %+v", version)
	}
	if envIn.Element != "static_select" || strings.Join(envIn.Options, ",") != "staging,prod" || envIn.Initial != "staging" || !envIn.Optional {
		t.Fatalf("env field %+v", envIn)
	}
	ack := s.fake.SubmitView(t, alice, v, map[string]string{"version": "1.4.2"}, testkit.Deadline)
	var resp struct {
		Action string            `json:"response_action"`
		Errors map[string]string `json:"errors"`
	}
	if err := json.Unmarshal(ack, &resp); err != nil || resp.Action != "errors" || !strings.Contains(resp.Errors["version"], `v[0-9]+\.[0-9]+\.[0-9]+`) {
		t.Fatalf("a bad version was answered %s; want an error on the version field", ack)
	}
	noRuns(t, st)
	if ack := s.fake.SubmitView(t, alice, v, map[string]string{"version": "v1.4.2", "env": "prod"}, testkit.Deadline); ack != nil {
		t.Fatalf("a valid submission was answered %s; want the modal closed", ack)
	}
	r := s.waitRoot(t, "release", 1) // in the channel where the command was typed
	s.waitStatus(t, r, "completed")
	if got := shipped(t, counters); got != "v1.4.2 prod" {
		t.Fatalf("the script saw %q, want INPUT_VERSION and INPUT_ENV as submitted", got)
	}
	runs, err := st.ListRuns(context.Background(), db.RunFilter{Workflow: "release"})
	if err != nil || len(runs) != 1 || runs[0].Inputs["version"] != "v1.4.2" || runs[0].UserID != "slack:"+alice {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	// A complete command starts at once, without a form.
	s.fake.SlashCommand(alice, channel, "run release version=v1.4.3")
	s.waitRoot(t, "release", 2)
	if n := len(s.fake.Views()); n != 1 {
		t.Fatalf("%d modals opened, want only the first command's", n)
	}
}

// The same on Discord: `/workflow run release` is answered with a modal (callback type 9) holding
// a text input for the version and a select for the environment; a bad version is answered with an
// ephemeral message naming it, with nothing written; a valid submission starts the run in the
// channel, and its script sees INPUT_VERSION.
func TestDiscordRunFormOpensAModalAndStartsTheRun(t *testing.T) {
	env, counters := formEnv(t)
	fake := discordfake.New(t)
	startDiscordBotIn(t, fake, env, workflowDir(t, map[string]string{"release.yaml": formRelease}))
	st := openStore(t, env)
	id := runWorkflow(fake, "release", "")
	var modal *discordfake.Modal
	fake.WaitFor(t, testkit.Deadline, func(f *discordfake.Server) bool {
		rs := f.InteractionResponses(id)
		if len(rs) > 0 {
			modal = rs[0].Modal
		}
		return len(rs) > 0
	})
	if modal == nil || modal.Title != "Run release" || len(modal.Fields) != 2 {
		t.Fatalf("the command was answered %v, want a modal with two inputs", responseKinds(fake.InteractionResponses(id)))
	}
	version, envField := modal.Fields[0], modal.Fields[1]
	if version.CustomID != "version" || version.Select || !version.Required || !strings.Contains(version.Description, "the version to ship") {
		t.Fatalf("version field %+v", version)
	}
	if !envField.Select || strings.Join(envField.Options, ",") != "staging,prod" || envField.Value != "staging" || envField.Required {
		t.Fatalf("env field %+v", envField)
	}
	bad := fake.SubmitModal(discordAlice, discordChannel, *modal, map[string]string{"version": "1.4.2"})
	answer := waitResponse(t, fake, bad)
	if answer.Kind != discordfake.KindMessage || !answer.Ephemeral || !strings.Contains(answer.Content, "input version does not accept") {
		t.Fatalf("a bad version was answered %+v; want an ephemeral message naming the version", answer)
	}
	noRuns(t, st)
	good := fake.SubmitModal(discordAlice, discordChannel, *modal, map[string]string{"version": "v1.4.2", "env": "prod"})
	if answer := waitResponse(t, fake, good); !answer.Ephemeral || !strings.Contains(answer.Content, "Started run") {
		t.Fatalf("a valid submission was answered %+v", answer)
	}
	r := waitDiscordRun(t, fake, "release", 1)
	waitDiscordStatus(t, fake, r, "completed")
	if got := shipped(t, counters); got != "v1.4.2 prod" {
		t.Fatalf("the script saw %q, want INPUT_VERSION and INPUT_ENV as submitted", got)
	}
	runs, err := st.ListRuns(context.Background(), db.RunFilter{Workflow: "release"})
	if err != nil || len(runs) != 1 || runs[0].Inputs["env"] != "prod" || runs[0].UserID != "discord:"+discordAlice {
		t.Fatalf("runs %+v, %v", runs, err)
	}
}

// waitResponse waits for the first answer to an interaction.
func waitResponse(t *testing.T, fake *discordfake.Server, id string) discordfake.Response {
	t.Helper()
	var r discordfake.Response
	fake.WaitFor(t, testkit.Deadline, func(f *discordfake.Server) bool {
		rs := f.InteractionResponses(id)
		if len(rs) > 0 {
			r = rs[0]
		}
		return len(rs) > 0
	})
	return r
}
