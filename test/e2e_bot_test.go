package test

import (
	"os"
	"testing"

	"threadflow/testkit/botproc"
)

// TestMain removes the bot binary the tests built (botproc builds it once for all of them).
func TestMain(m *testing.M) { os.Exit(botproc.Main(m)) }
