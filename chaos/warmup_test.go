package chaos

import (
	"context"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// TestWarmUp: the first fault of a slow starter waits not at all for a
// workload at its rate, and at most two session timeouts for one that
// never reaches it (Runner.warmUp's cap).
func TestWarmUp(t *testing.T) {
	const timeout = 100 * time.Millisecond
	r := &Runner{cfg: Config{SessionTimeout: timeout, MinRate: 5}}
	for _, tc := range []struct {
		name     string
		progress int
		min, max time.Duration
	}{
		{"at its rate", 1000, 0, 0},
		{"never at its rate", 0, 2 * timeout, 2*timeout + time.Second},
	} {
		env := &cluster.Env{Rec: history.NewRecorder()}
		c := env.Rec.Client("c1")
		for range tc.progress {
			c.Invoke(history.FnRead, "/r", 0).OK(0)
		}
		got := r.warmUp(context.Background(), env)
		if got < tc.min || got > tc.max {
			t.Errorf("%s: waited %v, want %v to %v", tc.name, got, tc.min, tc.max)
		}
	}
}
