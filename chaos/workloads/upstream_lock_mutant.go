package workloads

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// LockReacquire is the kazoo #282 variant and its twin: lock clients that
// loop acquire, fenced increments, release, under the default policy (a
// holding ends when the connection is suspended). The target (c1) holds
// for three session timeouts, so that the fault finds it holding, and it
// is the caller of kazoo #282: when its holding is lost it does not
// release it (the lock is gone, there is nothing to give back) and
// acquires again on the same lock object. Every client follows what its
// lock answers: an acquisition that fails with lock.ErrAlreadyHeld (our
// Mutex's answer to a Lock on a Mutex that still has a holding, lost or
// not) releases that holding, and the next round acquires again.
//
// With Mutant set, the target's lock object is kazoo's Lock before any
// fix: a flag set by an acquisition and cleared only by a release; an
// acquisition while the flag is set retries for ever (kazoo's
// _inner_acquire raises ForceRetryError, and the Lock's retry has no
// limit), so it neither returns nor errs: a hang. Under cut-short the
// session survives, and the node of the lost holding stays at the head of
// the queue with nobody to delete it: the bystanders wait behind it too
// (liveness sees the stall, no-nodes-left the node). The twin's
// lock.Mutex answers ErrAlreadyHeld at once, the caller unlocks (the
// node goes) and locks again.
type LockReacquire struct {
	Mutant bool
}

// Name is "lock-reacquire-mutant", or "lock-reacquire" for the twin.
func (w *LockReacquire) Name() string { return mutantName("lock-reacquire", w.Mutant) }

// QuickFaults names the faults that expose the lock-reacquire mutant.
func (w *LockReacquire) QuickFaults() []string { return mutantFaults["lock-reacquire"] }

// Checkers: mutual-exclusion, fencing, liveness, no-nodes-left.
func (w *LockReacquire) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.MutualExclusion(1), checkers.FencedWrites(), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// Run makes <root>/lock and <root>/counter = 0 and runs the target and the
// bystanders until ctx is done.
func (w *LockReacquire) Run(ctx context.Context, env *cluster.Env) error {
	lockPath, counter := env.Root+"/lock", env.Root+"/counter"
	return runAimed(ctx, env, lockPath, counter, func(i int, c *cluster.Client, quiesce func()) error {
		hold := 10 * time.Millisecond
		if i == 0 {
			hold = 3 * env.SessionTimeout
		}
		return aimedHolder(ctx, env, c, lockPath, counter, hold, quiesce, func(s *recipes.Session) func(context.Context) (*holding, error) {
			if i != 0 {
				return mutexAcquirer(s, lockPath)
			}
			if w.Mutant {
				return keepLost(naiveReacquirer(s, lockPath))
			}
			return keepLost(mutexAcquirer(s, lockPath))
		})
	})
}

// keepLost wraps the acquire function of the target of LockReacquire in
// the caller of kazoo #282: the release of a holding that was lost does
// nothing (the caller keeps it), and an acquisition that fails with
// lock.ErrAlreadyHeld releases the holding kept, as the error asks.
func keepLost(acquire func(context.Context) (*holding, error)) func(context.Context) (*holding, error) {
	var kept *holding
	return func(ctx context.Context) (*holding, error) {
		h, err := acquire(ctx)
		if errors.Is(err, lock.ErrAlreadyHeld) && kept != nil {
			_ = kept.release(ctx)
			kept = nil
		}
		if err != nil {
			return nil, err
		}
		release := h.release
		h.release = func(ctx context.Context) error {
			if errors.Is(context.Cause(h.held), recipes.ErrReleased) || h.held.Err() == nil {
				return release(ctx)
			}
			kept = &holding{release: release}
			return nil
		}
		return h, nil
	}
}

// naiveReacquirer returns the acquire function of kazoo's Lock as in
// kazoo #282: acquired is set by an acquisition and cleared only by a
// release; an acquisition while it is set polls it until ctx ends, and
// otherwise acquires as recipes.Acquire does.
func naiveReacquirer(s *recipes.Session, lockPath string) func(context.Context) (*holding, error) {
	var (
		mu       sync.Mutex
		acquired bool
	)
	isAcquired := func() bool { mu.Lock(); defer mu.Unlock(); return acquired }
	return func(ctx context.Context) (*holding, error) {
		for isAcquired() { // the mutant: ForceRetryError, retried for ever
			if !cluster.Sleep(ctx, 50*time.Millisecond) {
				return nil, ctx.Err()
			}
		}
		h, err := recipes.Acquire(ctx, s, recipes.Spec{Path: lockPath})
		if err != nil {
			return nil, err
		}
		mu.Lock()
		acquired = true
		mu.Unlock()
		return &holding{held: h.Context(), fence: h.Fence(), multi: h.FencedMulti, release: func(ctx context.Context) error {
			err := h.Release(ctx)
			mu.Lock()
			acquired = false
			mu.Unlock()
			return err
		}}, nil
	}
}
