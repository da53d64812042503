package workloads

import (
	"context"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/leader"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Leader is the workload of leader.Election: every client, with its own
// recipes.Session on its own link, loops Campaign, a few fenced increments
// of a counter through Term.FencedMulti, and Release. It records a term as
// a holding from Campaign's return (acquired, with the term's fencing
// token) to the moment the term's context is done (lost, with its cause)
// or Release is called (released).
//
// Checked by: at most one leader at any instant with growing term tokens,
// fencing order (no stale leader's write accepted, no update lost),
// linearizability of the increments, liveness after every heal, and no
// nodes left once the clients quiesced and after every session closed.
type Leader struct {
	// Writes is the number of fenced increments per term. Default 2.
	Writes int
	// Hold is a pause inside the term before each write. Default 5 ms.
	Hold time.Duration
}

// Name is "leader".
func (w *Leader) Name() string { return "leader" }

// Checkers: single-leader, fencing, linearizable, liveness, no-nodes-left.
func (w *Leader) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.SingleLeader(), checkers.FencedWrites(), checkers.Linearizable(cfg.CheckTimeout), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// Run makes <root>/election and <root>/counter = 0 and runs env.Clients
// participants until ctx is done.
func (w *Leader) Run(ctx context.Context, env *cluster.Env) error {
	hold := w.Hold
	if hold == 0 {
		hold = 5 * time.Millisecond
	}
	return runHolders(ctx, env, holderSpec{
		path: env.Root + "/election", counter: env.Root + "/counter", writes: w.Writes, hold: hold,
		acquirer: func(s *recipes.Session, i int) (func(context.Context) (*holding, error), error) {
			e, err := leader.New(s, env.Root+"/election", leader.WithData([]byte(env.ClientList()[i].Name)))
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) (*holding, error) {
				t, err := e.Campaign(ctx)
				if err != nil {
					return nil, err
				}
				return &holding{held: t.Context(), fence: t.Fence(), multi: t.FencedMulti, release: t.Release}, nil
			}, nil
		},
	})
}
