package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
