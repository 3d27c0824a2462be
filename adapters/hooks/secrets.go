package hooks

import (
	"fmt"
	"os"
	"slices"
	"sync"

	"threadflow/workflow"
)

// Secrets holds the triggers' shared secrets, read from the environment variables their
// `secret_env` names. Each is read once and then removed from the process environment, so the
// shell nodes and agent CLIs the bot starts never inherit it (as the bot's own secrets are).
type Secrets struct {
	// Getenv defaults to os.Getenv.
	Getenv func(string) string

	mu   sync.Mutex
	vals map[string]string
}

// Get is the secret in the variable name, "" when it is not set.
func (s *Secrets) Get(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.read(name)
}

// read reads name once; the caller holds s.mu.
func (s *Secrets) read(name string) string {
	if v, ok := s.vals[name]; ok {
		return v
	}
	getenv := s.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	v := getenv(name)
	if s.vals == nil {
		s.vals = map[string]string{}
	}
	s.vals[name] = v
	os.Unsetenv(name) // fails only for a name the environment cannot hold, which it then does not
	return v
}

// Disabled reads the secret of every webhook and GitHub trigger of the catalog (hiding each from
// children from now on) and names the triggers whose variable is unset: they refuse every
// delivery (503) until it is set and the bot restarted.
func (s *Secrets) Disabled(cat *workflow.Catalog) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, wf := range cat.List() {
		for _, tr := range wf.Triggers {
			if tr.SecretEnv != "" && s.read(tr.SecretEnv) == "" {
				out = append(out, fmt.Sprintf("%s (set %s)", tr.ID(wf.Name), tr.SecretEnv))
			}
		}
	}
	slices.Sort(out)
	return out
}
