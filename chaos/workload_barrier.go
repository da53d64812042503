package chaos

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/barrier"
)

// Barrier is the workload of barrier.DoubleBarrier: every client, with its
// own recipes.Session on its own link, runs rounds of Enter, a moment of
// work, and Leave on a double barrier of env.Clients members, each round on
// a fresh path (<root>/db/r<round>). Enter and Leave are recorded as
// operations (Key = the round's path).
//
// An Enter that fails (its member node went with its session, or it found
// nobody for two session timeouts) is tried again on the same round, unless
// a later round already began (then the client joins it). A client that
// learns its membership of a round was lost (its session changed since it
// entered, or Leave failed with barrier.ErrMemberLost) records a lost event
// for the round: the other members rightly stopped waiting for it.
//
// Checked by: nobody passes Enter before every member arrived, nobody
// passes Leave before every member still in the round began to leave
// (double-barrier), and liveness after every heal; no member node is left
// after every session closed.
type Barrier struct {
	// Work is the pause between Enter and Leave. Default 5 ms.
	Work time.Duration
}

// Name is "barrier".
func (w *Barrier) Name() string { return "barrier" }

// Checkers: double-barrier (of the scenario's clients), liveness,
// no-nodes-left.
func (w *Barrier) Checkers(cfg Config) []Checker {
	return []Checker{DoubleBarrier(cfg.Clients), Liveness(cfg.LivenessBound), NoNodesLeft()}
}

// Run runs env.Clients members until ctx is done.
func (w *Barrier) Run(ctx context.Context, env *Env) error {
	work := w.Work
	if work == 0 {
		work = 5 * time.Millisecond
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for i := range env.Clients {
		c, err := env.NewClient(fmt.Sprintf("c%d", i+1))
		if err != nil {
			errs = append(errs, err)
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.member(ctx, env, c, work); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (w *Barrier) member(ctx context.Context, env *Env, c *Client, work time.Duration) error {
	st := env.SessionTimeout
	s, err := connectRecipes(ctx, env, c)
	if s == nil {
		return err
	}
	defer closeRecipes(s, st)
	roundPath := func(r int) string { return fmt.Sprintf("%s/db/r%06d", env.Root, r) }
	for round := 1; ctx.Err() == nil; round++ {
		p := roundPath(round)
		d := barrier.NewDouble(s, p, env.Clients)
		entered := false
		for ctx.Err() == nil {
			op := c.Log.Invoke(FnEnter, p, 0)
			ectx, cancel := context.WithTimeout(ctx, 2*st)
			err := d.Enter(ectx)
			cancel()
			if err == nil {
				op.OK(0)
				entered = true
				break
			}
			op.Fail(err.Error())
			if ctx.Err() != nil {
				break
			}
			// Someone moved on to the next round: join it.
			if ok, _, err := s.Conn().Exists(roundPath(round + 1)); err == nil && ok {
				c.Log.Lost(p, 0, "a later round began")
				break
			}
			d = barrier.NewDouble(s, p, env.Clients)
			pause(ctx, 20*time.Millisecond)
		}
		if !entered {
			continue
		}
		session := s.Conn().SessionID()
		pause(ctx, work)
		if ctx.Err() != nil {
			// Stopping: the member leaves by closing its session (its node
			// goes with it), which lets the others' Leave return. Record
			// that leave, whose outcome this client never learns.
			c.Log.Invoke(FnLeave, p, 0).Unknown("stopping: leaves by closing its session")
			break
		}
		if id := s.Conn().SessionID(); id != session {
			c.Log.Lost(p, 0, fmt.Sprintf("session changed from 0x%x to 0x%x", session, id))
			continue
		}
		op := c.Log.Invoke(FnLeave, p, 0)
		err := d.Leave(ctx)
		switch {
		case err == nil:
			op.OK(0)
		case errors.Is(err, barrier.ErrMemberLost):
			op.Fail(err.Error())
			c.Log.Lost(p, 0, err.Error())
		default:
			op.Unknown(err.Error())
		}
	}
	return nil
}
