package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// The image's health check asks the port HTTP_ADDR names, not a hard-coded 8080: run the
// Dockerfile's HEALTHCHECK command (busybox and Debian sh both expand ${HTTP_ADDR##*:}) against a
// real bot on another port, and against a port where nothing listens.
func TestDockerHealthCheckFollowsHTTPAddr(t *testing.T) {
	check := dockerHealthCheck(t)
	port := freePort(t)
	p := launchIn(t, t.TempDir(), "HTTP_ADDR=127.0.0.1:"+port)
	serving(t, p)
	defer stopClean(t, p, syscall.SIGTERM)

	if out, err := runHealthCheck(check, "0.0.0.0:"+port); err != nil {
		t.Fatalf("health check with HTTP_ADDR=0.0.0.0:%s against a bot on that port failed: %v\n%s", port, err, out)
	}
	if out, err := runHealthCheck(check, "0.0.0.0:"+freePort(t)); err == nil {
		t.Fatalf("health check against a port where nothing listens passed:\n%s", out)
	}
}

func dockerHealthCheck(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^HEALTHCHECK .*? CMD (.+)$`).FindSubmatch(src)
	if m == nil {
		t.Fatal("the Dockerfile has no HEALTHCHECK ... CMD line")
	}
	return string(m[1])
}

func runHealthCheck(check, httpAddr string) ([]byte, error) {
	cmd := exec.Command("sh", "-c", check)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HTTP_ADDR=" + httpAddr}
	return cmd.CombinedOutput()
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// The compose file and the Kubernetes manifests in deploy/ use only settings the bot knows, give
// a stopping replica longer than its SHUTDOWN_GRACE, and probe the endpoints the bot serves.
func TestDeployFilesMatchTheBot(t *testing.T) {
	compose := yamlDocs(t, "../../deploy/compose.yaml")[0]
	replica := compose["x-replica"].(map[string]any)
	env := replica["environment"].(map[string]any)
	knownSettings(t, "deploy/compose.yaml", mapsKeys(env))
	graceAtLeast(t, "compose stop_grace_period", replica["stop_grace_period"].(string), env["SHUTDOWN_GRACE"].(string))

	var deployment map[string]any
	for _, d := range yamlDocs(t, "../../deploy/kubernetes/threadflow.yaml") {
		if d["kind"] == "Deployment" {
			deployment = d
		}
	}
	if deployment == nil {
		t.Fatal("deploy/kubernetes/threadflow.yaml has no Deployment")
	}
	pod := dig(deployment, "spec", "template", "spec")
	c := pod["containers"].([]any)[0].(map[string]any)
	vars := map[string]string{}
	for _, e := range c["env"].([]any) {
		e := e.(map[string]any)
		vars[e["name"].(string)], _ = e["value"].(string)
	}
	knownSettings(t, "deploy/kubernetes/threadflow.yaml", mapsKeys(vars))
	graceAtLeast(t, "terminationGracePeriodSeconds", strconv.Itoa(pod["terminationGracePeriodSeconds"].(int))+"s", vars["SHUTDOWN_GRACE"])
	for probe, path := range map[string]string{"readinessProbe": "/readyz", "livenessProbe": "/healthz"} {
		if got := dig(c, probe, "httpGet")["path"]; got != path {
			t.Errorf("%s path = %v, want %s", probe, got, path)
		}
	}

	secret := yamlDocs(t, "../../deploy/kubernetes/secret.example.yaml")[0]
	knownSettings(t, "deploy/kubernetes/secret.example.yaml", mapsKeys(secret["stringData"].(map[string]any)))
}

func yamlDocs(t *testing.T, path string) []map[string]any {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var docs []map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(src))
	for {
		var d map[string]any
		if err := dec.Decode(&d); err != nil {
			if errors.Is(err, io.EOF) {
				return docs
			}
			t.Fatalf("%s: %v", filepath.Base(path), err)
		}
		docs = append(docs, d)
	}
}

func dig(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		m = m[k].(map[string]any)
	}
	return m
}

func mapsKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func knownSettings(t *testing.T, file string, names []string) {
	t.Helper()
	for _, n := range names {
		if !slices.ContainsFunc(settings, func(s setting) bool { return s.env == n }) {
			t.Errorf("%s sets %s, which is not a setting of the bot (cmd/bot/variables.go)", file, n)
		}
	}
}

func graceAtLeast(t *testing.T, what, grace, shutdownGrace string) {
	t.Helper()
	g, err1 := time.ParseDuration(grace)
	s, err2 := time.ParseDuration(shutdownGrace)
	if err1 != nil || err2 != nil || g <= s+5*time.Second {
		t.Errorf("%s = %s, want more than SHUTDOWN_GRACE (%s) plus 5s to hand runs back (%v %v)", what, grace, shutdownGrace, err1, err2)
	}
}
