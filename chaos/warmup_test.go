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

// TestAwaitPending: the first fault of a paced workload waits not at all
// when its target's operation is pending, until it is when it becomes so,
// and at most two session timeouts when it never does (Runner.awaitPending).
func TestAwaitPending(t *testing.T) {
	const timeout = 100 * time.Millisecond
	r := &Runner{cfg: Config{SessionTimeout: timeout}}
	for _, tc := range []struct {
		name     string
		after    time.Duration // the target's enter is called this late; <0: never
		min, max time.Duration
	}{
		{"pending already", 0, 0, 0},
		{"pending later", timeout / 2, timeout / 2, 2 * timeout},
		{"never pending", -1, 2 * timeout, 2*timeout + time.Second},
	} {
		env := &cluster.Env{Rec: history.NewRecorder()}
		c1, c2 := env.Rec.Client("c1"), env.Rec.Client("c2")
		c2.Invoke(history.FnEnter, "/b", 0) // another client's wait counts for nothing
		c1.Invoke(history.FnEnter, "/b", 0).OK(0)
		switch {
		case tc.after == 0:
			c1.Invoke(history.FnEnter, "/b", 0)
		case tc.after > 0:
			timer := time.AfterFunc(tc.after, func() { c1.Invoke(history.FnEnter, "/b", 0) })
			defer timer.Stop()
		}
		got := r.awaitPending(context.Background(), env, "c1", history.FnEnter)
		if got < tc.min || got > tc.max {
			t.Errorf("%s: waited %v, want %v to %v", tc.name, got, tc.min, tc.max)
		}
	}
}
