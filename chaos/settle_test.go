package chaos

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// TestSettleLingers: once the scenario's duration has passed and every
// client progressed after the last heal, settle ends the scenario at once
// unless the workload lingers (cluster.Env.Linger); then it ends when the
// linger closes, and a linger that never closes ends at the liveness bound
// after the heal.
func TestSettleLingers(t *testing.T) {
	const bound = 600 * time.Millisecond
	r := &Runner{cfg: Config{Duration: time.Millisecond, LivenessBound: bound}}
	for _, tc := range []struct {
		name     string
		linger   time.Duration // how long the linger stays open; <0: none, 0: forever
		min, max time.Duration
	}{
		{"no linger", -1, 0, bound / 2},
		{"linger closes", 300 * time.Millisecond, 300 * time.Millisecond, bound},
		{"linger never closes", 0, bound, bound + bound/2},
	} {
		env := &cluster.Env{Rec: history.NewRecorder()}
		c := env.Rec.Client("c1")
		c.Invoke(history.FnRead, "/r", 0).OK(0)
		began := time.Now()
		if tc.linger >= 0 {
			var calls atomic.Int64
			env.Linger(func() bool {
				calls.Add(1)
				return tc.linger == 0 || time.Since(began) < tc.linger
			})
			defer func() {
				if calls.Load() == 0 {
					t.Errorf("%s: the linger was never asked", tc.name)
				}
			}()
		}
		finished := r.settle(context.Background(), env, began, 0, false, make(chan error), func(error) {})
		got := time.Since(began)
		if finished {
			t.Errorf("%s: settle reports the workload returned", tc.name)
		}
		if got < tc.min || got > tc.max {
			t.Errorf("%s: settled after %v, want %v to %v", tc.name, got, tc.min, tc.max)
		}
	}
}
