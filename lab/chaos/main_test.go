package chaos

import (
	"os"
	"testing"
)

// TestMain lets the test binary serve as a chaos worker (LockProc).
func TestMain(m *testing.M) {
	RunWorkerIfAsked()
	os.Exit(m.Run())
}
