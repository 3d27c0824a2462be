package proctag

import "testing"

func TestEnvValue(t *testing.T) {
	env := []byte("A=1\x00THREADFLOW_RUN_ID=abc\x00B=2\x00")
	if v, ok := EnvValue(env, []byte("THREADFLOW_RUN_ID=")); !ok || v != "abc" {
		t.Fatalf("EnvValue = %q, %v; want abc", v, ok)
	}
	if _, ok := EnvValue(env, []byte("RUN_ID=")); ok {
		t.Fatal("EnvValue matched RUN_ID= inside THREADFLOW_RUN_ID=")
	}
}
