package workloads

import (
	"context"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Semaphore is the workload of lock.Semaphore: every client, with its own
// recipes.Session on its own link, loops Acquire, a short pause inside the
// permit, and Release, on a semaphore of N permits. It records each permit as
// a holding from Acquire's return to the moment Permit.Context is done (lost)
// or Release is called (released). Permits do not write: with n > 1
// concurrent holders, fencing order is not an invariant.
//
// Checked by: at most N holders at any instant, liveness after every heal,
// and no nodes left once the clients quiesced and after every session
// closed.
type Semaphore struct {
	// N is the number of permits. Default: one less than the clients (at
	// least 1), so that clients contend.
	N int
	// Hold is the time a permit is held. Default 20 ms.
	Hold time.Duration
}

// Name is "semaphore".
func (w *Semaphore) Name() string { return "semaphore" }

func (w *Semaphore) n(clients int) int {
	if w.N > 0 {
		return w.N
	}
	return max(1, clients-1)
}

// Checkers: semaphore-N (mutual exclusion with N), liveness, no-nodes-left.
func (w *Semaphore) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.MutualExclusion(w.n(cfg.Clients)), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// Run makes <root>/semaphore and runs env.Clients clients until ctx is
// done.
func (w *Semaphore) Run(ctx context.Context, env *cluster.Env) error {
	hold := w.Hold
	if hold == 0 {
		hold = 20 * time.Millisecond
	}
	n := w.n(env.Clients)
	path := env.Root + "/semaphore"
	return runHolders(ctx, env, holderSpec{
		path: path, hold: hold,
		acquirer: func(s *recipes.Session, _ int) (func(context.Context) (*holding, error), error) {
			sem, err := lock.NewSemaphore(s, path, n)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) (*holding, error) {
				l, err := sem.Acquire(ctx)
				if err != nil {
					return nil, err
				}
				return &holding{held: l.Context(), fence: l.Fence(), release: l.Release}, nil
			}, nil
		},
	})
}
