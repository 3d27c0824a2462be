package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestDocsListEverySetting keeps README.md and .env.example in step with the settings table.
func TestDocsListEverySetting(t *testing.T) {
	for _, doc := range []string{"README.md", ".env.example"} {
		b, err := os.ReadFile(filepath.Join("..", "..", doc))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for _, s := range settings {
			if !strings.Contains(text, s.env) {
				t.Errorf("%s does not document %s", doc, s.env)
			}
		}
	}
}

// TestCIRunsTheReadmeTestCommand keeps .ci/run running exactly the test command the README gives.
func TestCIRunsTheReadmeTestCommand(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile(filepath.Join("..", "..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	var command string
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "go test ") {
			command = line
			break
		}
	}
	if command == "" {
		t.Fatal("README.md has no line starting with `go test `")
	}
	if !strings.Contains("\n"+string(ci)+"\n", "\n"+command+"\n") {
		t.Errorf(".ci/run does not run the README's test command %q on a line of its own", command)
	}
}

// readSlackManifest decodes deploy/slack-app-manifest.yaml into m.
func readSlackManifest(t *testing.T, m any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "slack-app-manifest.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, m); err != nil {
		t.Fatal(err)
	}
}

// TestSlackManifestOpensTheMessagesTab: docs/slack.md promises direct messages to the bot, which
// Slack blocks unless App Home's Messages tab is on and writable.
func TestSlackManifestOpensTheMessagesTab(t *testing.T) {
	var m struct {
		Features struct {
			AppHome struct {
				MessagesTab         *bool `yaml:"messages_tab_enabled"`
				MessagesTabReadOnly *bool `yaml:"messages_tab_read_only_enabled"`
			} `yaml:"app_home"`
		} `yaml:"features"`
	}
	readSlackManifest(t, &m)
	h := m.Features.AppHome
	if h.MessagesTab == nil || !*h.MessagesTab || h.MessagesTabReadOnly == nil || *h.MessagesTabReadOnly {
		t.Errorf("manifest features.app_home = %+v; want messages_tab_enabled: true and messages_tab_read_only_enabled: false", h)
	}
}

// TestSlackManifestReadsWhereTheBotPosts: before posting a message it owes, the bot reads the
// conversation for it (conversations.history and conversations.replies), which needs the history
// scope of every kind of conversation it posts in (docs/slack.md).
func TestSlackManifestReadsWhereTheBotPosts(t *testing.T) {
	var m struct {
		OAuth struct {
			Scopes struct {
				Bot []string `yaml:"bot"`
			} `yaml:"scopes"`
		} `yaml:"oauth_config"`
	}
	readSlackManifest(t, &m)
	for _, scope := range []string{"chat:write", "channels:history", "groups:history", "im:history"} {
		if !slices.Contains(m.OAuth.Scopes.Bot, scope) {
			t.Errorf("the manifest's bot scopes %v lack %s", m.OAuth.Scopes.Bot, scope)
		}
	}
}

// TestDocsAgreeOnAdminsAndHome keeps the statements newcomers trip over the same everywhere.
func TestDocsAgreeOnAdminsAndHome(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	readme, env, wf := read("README.md"), read(".env.example"), read("docs/workflows.md")
	const emptyAdmins = "console:local is the admin"
	for name, text := range map[string]string{"README.md": readme, ".env.example": env} {
		if !strings.Contains(strings.ReplaceAll(text, "`", ""), emptyAdmins) {
			t.Errorf("%s does not say %q about an empty ADMIN_USER_IDS", name, emptyAdmins)
		}
	}
	if strings.Contains(wf, "$HOME/workflows") || !strings.Contains(wf, "$THREADFLOW_HOME/workflows/") {
		t.Errorf("docs/workflows.md must name $THREADFLOW_HOME/workflows/, not $HOME/workflows")
	}
	if !strings.Contains(wf, "### Reloading") || !strings.Contains(wf, "every 2 seconds") {
		t.Errorf("docs/workflows.md does not document reloading every 2 seconds")
	}
}
