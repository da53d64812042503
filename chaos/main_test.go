package chaos

import (
	"os"
	"testing"

	"github.com/zkrecipes/zkrecipes/chaos/workloads"
)

// TestMain lets the test binary serve as a chaos worker (LockProc).
func TestMain(m *testing.M) {
	workloads.RunWorkerIfAsked()
	os.Exit(m.Run())
}
