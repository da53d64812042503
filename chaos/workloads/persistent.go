package workloads

import (
	"context"
	"errors"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/persistent"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Persistent is the workload of persistent.Node's presence (and so of
// group.Member's, which is a persistent.Node's): every client, with its own
// recipes.Session on its own link, loops: a persistent.Node at one shared
// path, <root>/presence/owner, Start (which waits while another client's
// node holds the path), a short pause, Leave. It records each node as a
// holding from Start's return to the moment Present() is done (lost) or
// Leave is called (released). Another client's Start returns only once the
// server removed the node, by a delete or with its session; so two
// holdings that overlap are a Present() that was still live after the
// server had removed its node, the promise persistent.Node.Present makes
// (its lease ends it before the server can expire the session).
//
// Checked by: mutual exclusion (no two clients present at once; a node
// has no fencing token, so tokens are 0 and only overlaps count), the
// lease margin (runner: a lost presence ended before the next client's
// began), liveness after every heal, and no nodes left once the clients
// quiesced and after every session closed.
//
// PersistentExpiry runs it as a mutant and twin.
type Persistent struct {
	// Hold is the time a client stays present before it leaves. Default
	// 50 ms.
	Hold time.Duration
	// untilReplaced: the mutant's presence (PersistentExpiry).
	untilReplaced bool
}

// Name is "persistent".
func (w *Persistent) Name() string { return "persistent" }

// QuickFaults names the persistent workload's quick-tier faults.
func (w *Persistent) QuickFaults() []string { return quickFaults[w.Name()] }

// Checkers: mutual-exclusion, liveness, no-nodes-left (and the lease
// margin, which the runner adds to every exclusive workload).
func (w *Persistent) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.MutualExclusion(1), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// Run makes <root>/presence and runs env.Clients clients until ctx is
// done.
func (w *Persistent) Run(ctx context.Context, env *cluster.Env) error {
	hold := w.Hold
	if hold == 0 {
		hold = 50 * time.Millisecond
	}
	dir := env.Root + "/presence"
	path := dir + "/owner"
	return runHolders(ctx, env, holderSpec{
		path: dir, hold: hold,
		acquirer: func(s *recipes.Session, _ int) (func(context.Context) (*holding, error), error) {
			return func(ctx context.Context) (*holding, error) {
				n, err := persistent.New(s, path)
				if err != nil {
					return nil, err
				}
				if err := n.Start(ctx); err != nil {
					return nil, err
				}
				held := n.Present()
				if w.untilReplaced {
					held = untilReplaced(s, held)
				}
				return &holding{held: held, release: n.Leave}, nil
			}, nil
		},
	})
}

// untilReplaced is the mutant's presence: done when present ends for a
// cause other than a lost session (a delete, Leave), or when s reports a
// session other than the one present began on, or closes; a lost session
// alone (the lease's StateLost) does not end it.
func untilReplaced(s *recipes.Session, present context.Context) context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	owner := s.ID()
	_, id, stop := s.OnStateChange(func(sc recipes.StateChange) {
		if sc.State == recipes.StateClosed || sc.State == recipes.StateConnected && sc.SessionID != owner {
			cancel(recipes.ErrSessionLost)
		}
	})
	if id != owner {
		cancel(recipes.ErrSessionLost)
	}
	go func() {
		defer stop()
		select {
		case <-ctx.Done():
		case <-present.Done():
			if cause := context.Cause(present); !errors.Is(cause, recipes.ErrSessionLost) {
				cancel(cause)
				return
			}
			<-ctx.Done()
		}
	}()
	return ctx
}
