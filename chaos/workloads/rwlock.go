package workloads

import (
	"context"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/rwlock"
)

// RWLock is the workload of rwlock.RWMutex: every client, with its own
// recipes.Session on its own link, loops taking the lock, holding it
// briefly, and releasing it, mixing readers and writers (client i takes the
// write lock on every third round, starting at round i, and the read lock
// otherwise). Writers do a few fenced increments of a counter
// (FencedMulti); readers hold for a moment so that they overlap. Each
// holding is recorded from the lock call's return (acquired, mode "read" or
// "write", with its fencing token) to the moment the side's Context is done (lost)
// or the unlock is called (released).
//
// Checked by: a writer never overlaps any other holder, fencing order of
// the writers' increments, their linearizability, liveness after every
// heal, and no nodes left once the clients quiesced and after every session
// closed.
type RWLock struct {
	// Hold is the pause inside a holding (before each write). Default 10 ms.
	Hold time.Duration
}

// Name is "rwlock".
func (w *RWLock) Name() string { return "rwlock" }

// Checkers: writer-exclusive, fencing, linearizable, liveness, no-nodes-left.
func (w *RWLock) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.WriterExclusive(), checkers.FencedWrites(), checkers.Linearizable(cfg.CheckTimeout), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// Run makes <root>/rwlock and <root>/counter = 0 and runs env.Clients
// clients until ctx is done.
func (w *RWLock) Run(ctx context.Context, env *cluster.Env) error {
	hold := w.Hold
	if hold == 0 {
		hold = 10 * time.Millisecond
	}
	path := env.Root + "/rwlock"
	return runHolders(ctx, env, holderSpec{
		path: path, counter: env.Root + "/counter", hold: hold,
		// every attempt an operation: a handoff under latency-near can
		// outlast the fault's window with no other event in it
		invokes: true,
		acquirer: func(s *recipes.Session, i int) (func(context.Context) (*holding, error), error) {
			m, err := rwlock.New(s, path)
			if err != nil {
				return nil, err
			}
			round := i
			return func(ctx context.Context) (*holding, error) {
				round++
				if round%3 == 0 {
					if err := m.Lock(ctx); err != nil {
						return nil, err
					}
					return &holding{mode: "write", held: m.Context(), fence: m.Fence(), multi: m.FencedMulti, release: m.Unlock}, nil
				}
				if err := m.Reader().Lock(ctx); err != nil {
					return nil, err
				}
				return &holding{mode: "read", held: m.Reader().Context(), fence: m.Reader().Fence(), release: m.Reader().Unlock}, nil
			}, nil
		},
	})
}
