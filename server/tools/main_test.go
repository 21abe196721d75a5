package tools

import (
	"os"
	"testing"

	"github.com/opsagent/opsagent/server/sandbox"
)

// TestMain makes the test binary its own sandbox launcher: the commands
// the tests run re-execute it as "sandbox-exec".
func TestMain(m *testing.M) {
	sandbox.Init()
	os.Exit(m.Run())
}
