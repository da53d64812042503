package chaos

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/twophase"
)

// TwoPhase is the workload of package twophase: the first client is the
// coordinator, every other client a site (a Participant), each with its own
// recipes.Session on its own link. The coordinator begins transactions
// "tx-<n>" among all sites one after another and records Decide as a
// decide operation (Key = tx, ok Value 1 commit / 0 abort). Each site
// streams its transactions, votes (commit, except every fifth transaction
// of the second site, which it aborts), awaits the decision and finishes;
// votes are recorded as vote operations (ok Value = the vote) and the
// decision each site ends with as a learn operation. A vote whose outcome
// the site could not learn is unknown.
//
// When ctx is done the coordinator begins nothing more and finishes the
// transaction in flight, and each site stops taking new transactions but
// awaits the decision of those it voted in (the coordinator's vote timeout
// and the sites' deadline bound the wait).
//
// Checked by: one decision per transaction, a commit only with a commit
// vote from every site, every site that voted ends with the decision
// (two-phase-commit), and liveness after every heal.
type TwoPhase struct{}

// Name is "twophase".
func (w *TwoPhase) Name() string { return "twophase" }

// Checkers: two-phase-commit, liveness, no-nodes-left.
func (w *TwoPhase) Checkers(cfg Config) []Checker {
	return []Checker{TwoPhaseCommit(), Liveness(cfg.LivenessBound), NoNodesLeft()}
}

// Run runs the coordinator and the sites until ctx is done, then lets them
// finish what they started.
func (w *TwoPhase) Run(ctx context.Context, env *Env) error {
	root := env.Root + "/2pc"
	n := max(2, env.Clients)
	var sites []string
	for i := 2; i <= n; i++ {
		sites = append(sites, fmt.Sprintf("c%d", i))
	}
	st := env.SessionTimeout
	// finish bounds the work after ctx is done: votes time out, sites abort
	// themselves, and a decision already written is read.
	finish, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	go func() {
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
	for i := range n {
		c, err := env.NewClient(fmt.Sprintf("c%d", i+1))
		if err != nil {
			fail(err)
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 0 {
				fail(w.coordinator(ctx, finish, env, c, root, sites))
			} else {
				fail(w.site(ctx, finish, env, c, root, i))
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (w *TwoPhase) coordinator(ctx, finish context.Context, env *Env, c *Client, root string, sites []string) error {
	st := env.SessionTimeout
	s, err := connectRecipes(ctx, env, c)
	if s == nil {
		return err
	}
	defer closeRecipes(s, st)
	co := twophase.NewCoordinator(s, root, twophase.WithVoteTimeout(3*st))
	for n := 1; ctx.Err() == nil; n++ {
		id := fmt.Sprintf("tx-%05d", n)
		var tx *twophase.Tx
		for ctx.Err() == nil { // Begin is idempotent: retry until it answers
			if tx, err = co.Begin(ctx, id, sites, []byte(id)); err == nil {
				break
			}
			pause(ctx, 50*time.Millisecond)
		}
		if tx == nil {
			break // stopping before the transaction surely began; nobody voted on it if it did
		}
		op := c.Log.Invoke(FnDecide, id, 0)
		for {
			d, err := tx.Decide(finish)
			if err == nil {
				op.OKKey(id, decisionValue(d))
				break
			}
			if finish.Err() != nil {
				op.Unknown(err.Error())
				return nil
			}
			pause(finish, 50*time.Millisecond)
		}
		pause(ctx, 10*time.Millisecond)
	}
	return nil
}

func decisionValue(d twophase.Decision) int64 {
	if d == twophase.Commit {
		return 1
	}
	return 0
}

func (w *TwoPhase) site(ctx, finish context.Context, env *Env, c *Client, root string, i int) error {
	st := env.SessionTimeout
	s, err := connectRecipes(ctx, env, c)
	if s == nil {
		return err
	}
	defer closeRecipes(s, st)
	p := twophase.NewParticipant(s, root, c.Name, twophase.WithDeadline(5*st))
	seen := 0
	for pr := range p.Transactions(ctx) {
		seen++
		id := pr.TxID()
		voted := pr.Voted() != 0
		if pr.Decision() == 0 && !voted {
			v := twophase.Commit
			if i == 2 && seen%5 == 0 {
				v = twophase.Abort
			}
			op := c.Log.Invoke(FnVote, id, 0)
			if err := pr.Vote(ctx, v); err != nil {
				op.Unknown(err.Error())
			} else {
				op.OKKey(id, decisionValue(v))
				voted = true
			}
		}
		op := c.Log.Invoke(FnLearn, id, 0)
		var d twophase.Decision
		for {
			if d, err = pr.Await(finish); err == nil || finish.Err() != nil {
				break
			}
			pause(finish, 50*time.Millisecond)
		}
		if err != nil {
			op.Unknown(err.Error())
			break
		}
		op.OKKey(id, decisionValue(d))
		fctx, fcancel := context.WithTimeout(finish, st)
		_ = pr.Finish(fctx)
		fcancel()
		if ctx.Err() != nil {
			break
		}
	}
	return nil
}
