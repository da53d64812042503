package workloads

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/twophase"
)

// TwoPhaseTimeout is the two-phase timeout mutant and its twin: the
// twophase workload (see TwoPhase) with the coordinator as a bystander and
// the first site (c1) as the target, so that a client fault delays that
// site's vote. The coordinator begins transactions one after another and
// waits three quarters of a session timeout for Decide.
//
// The twin then goes on waiting: the real Decide writes abort when the
// target's liveness node goes with its session, or when its vote timeout
// (three session timeouts) passes. With Mutant set, the coordinator commits
// when its wait runs out with votes missing (it writes the decision node
// itself): under partition-expire of the target, a transaction commits
// without the target's vote, and the two-phase-commit checker catches it.
// Without a fault every vote comes in milliseconds, and under latency-low
// (responses 1/20 of a session timeout late) well within the wait: the
// mutant never times out. Once the workload stops, sites stop voting on
// purpose; the mutant then waits as the twin does.
type TwoPhaseTimeout struct {
	Mutant bool
}

// Name is "twophase-timeout-mutant", or "twophase-timeout" for the twin.
func (w *TwoPhaseTimeout) Name() string { return mutantName("twophase-timeout", w.Mutant) }

// Checkers: two-phase-commit, liveness, no-nodes-left.
func (w *TwoPhaseTimeout) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.TwoPhaseCommit(), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// Run runs the coordinator (c2) and the sites (c1, c3, ...) until ctx is
// done, lets them finish what they started, and audits as TwoPhase does.
func (w *TwoPhaseTimeout) Run(ctx context.Context, env *cluster.Env) error {
	root := env.Root + "/2pc"
	st := env.SessionTimeout
	cs, closeLinks, err := mutantClients(env, 3, 1)
	if err != nil {
		return err
	}
	defer closeLinks()
	sites := []string{cs[0].Name}
	for _, c := range cs[2:] {
		sites = append(sites, c.Name)
	}
	finish, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	go func() { // bound the work after ctx is done
		select {
		case <-ctx.Done():
		case <-finish.Done():
			return
		}
		select {
		case <-time.After(8*st + 10*time.Second):
			cancel()
		case <-finish.Done():
		}
	}()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	fail := func(err error) {
		if err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
	}
	tp := &TwoPhase{}
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 1 {
				fail(w.coordinator(ctx, finish, env, c, root, sites))
			} else {
				fail(tp.site(ctx, finish, env, c, root, i, &crashes{env: env})) // no crashes: the mutant is about votes
			}
		}()
	}
	wg.Wait()
	actx, acancel := context.WithTimeout(context.WithoutCancel(ctx), 4*st+30*time.Second)
	defer acancel()
	fail(tp.audit(actx, env, root))
	return errors.Join(errs...)
}

// coordinator begins transactions until ctx is done and decides each: it
// waits three quarters of a session timeout for Decide, then (twin) waits on, or
// (mutant) commits.
func (w *TwoPhaseTimeout) coordinator(ctx, finish context.Context, env *cluster.Env, c *cluster.Client, root string, sites []string) error {
	st := env.SessionTimeout
	s, err := connectRecipes(ctx, env, c)
	if s == nil {
		return err
	}
	defer closeRecipes(s, st)
	co, err := twophase.NewCoordinator(s, root, twophase.WithVoteTimeout(3*st))
	if err != nil {
		return fmt.Errorf("chaos: %s: %w", c.Log.Name(), err)
	}
	for n := 1; ctx.Err() == nil; n++ {
		id := fmt.Sprintf("tx-%05d", n)
		var tx *twophase.Tx
		for ctx.Err() == nil { // Begin is idempotent: retry until it answers
			if tx, err = co.Begin(ctx, id, sites, []byte(id)); err == nil {
				break
			}
			cluster.Sleep(ctx, 50*time.Millisecond)
		}
		if tx == nil {
			break
		}
		op := c.Log.Invoke(history.FnDecide, id, 0)
		wait, stop := context.WithTimeout(finish, 3*st/4)
		d, err := tx.Decide(wait)
		stop()
		if err != nil && w.Mutant && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			// The mutant: votes are late, so it commits. (Not once the
			// workload stops: sites then stop voting, on purpose.)
			_, cerr := s.Conn().Create(tx.Path()+"/decision", []byte("commit"), 0, s.ACLFor(tx.Path()+"/decision"))
			if cerr == nil {
				d, err = twophase.Commit, nil
			}
		}
		for err != nil {
			if finish.Err() != nil {
				op.Unknown(err.Error())
				return nil
			}
			cluster.Sleep(finish, 50*time.Millisecond)
			d, err = tx.Decide(finish)
		}
		op.OKKey(id, decisionValue(d))
		cluster.Sleep(ctx, 10*time.Millisecond)
	}
	return nil
}
