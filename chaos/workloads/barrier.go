package workloads

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkrecipes/zkrecipes/barrier"
	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/recipes"
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
// for the round, stamped with the moment its session last stopped being
// usable (the node can have gone no earlier): from then on the other
// members rightly stopped waiting for it.
//
// Checked by: nobody passes Enter before every member arrived, nobody
// passes Leave before every member still in the round began to leave
// (double-barrier), and liveness after every heal; no member node is left
// after every session closed, and a round that every member left with a
// successful Leave holds no node at all ("ready" included).
type Barrier struct {
	// Work is the pause between Enter and Leave. Default 5 ms.
	Work time.Duration

	mu   sync.Mutex
	left map[string]int // round path -> Leave calls that returned ok
}

// Name is "barrier".
func (w *Barrier) Name() string { return "barrier" }

// Checkers: double-barrier (of the scenario's clients), liveness,
// no-nodes-left.
func (w *Barrier) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.DoubleBarrier(cfg.Clients), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// Run runs env.Clients members until ctx is done.
func (w *Barrier) Run(ctx context.Context, env *cluster.Env) error {
	var (
		cs   []*cluster.Client
		errs []error
	)
	for i := range env.Clients {
		c, err := env.NewClient(fmt.Sprintf("c%d", i+1))
		if err != nil {
			errs = append(errs, err)
			break
		}
		cs = append(cs, c)
	}
	return errors.Join(append(errs, w.run(ctx, env, cs, env.Clients, func(int) barrierRole { return barrierRole{newMember: newDouble} }))...)
}

// barrierMember is one member of one round of a double barrier:
// barrier.DoubleBarrier, or a naive variant of it.
type barrierMember interface {
	Enter(context.Context) error
	Leave(context.Context) error
}

// barrierRole is how client i plays: the member it makes for each round
// (path, n members), and how long it pauses before each round's Enter.
type barrierRole struct {
	newMember func(s *recipes.Session, path string, n int) (barrierMember, error)
	pause     time.Duration
}

// newDouble is our recipe's member.
func newDouble(s *recipes.Session, p string, n int) (barrierMember, error) {
	d, err := barrier.NewDouble(s, p, n)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// run runs the clients cs as members of double barriers of n members, client
// i as role(i) says, until ctx is done; then it audits the finished rounds.
func (w *Barrier) run(ctx context.Context, env *cluster.Env, cs []*cluster.Client, n int, role func(i int) barrierRole) error {
	work := w.Work
	if work == 0 {
		work = 5 * time.Millisecond
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	w.mu.Lock()
	w.left = map[string]int{}
	w.mu.Unlock()
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.member(ctx, env, c, n, work, role(i)); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*env.SessionTimeout+10*time.Second)
	defer cancel()
	errs = append(errs, w.audit(actx, env, n))
	return errors.Join(errs...)
}

// audit records as litter the nodes left in every round that all n
// members left with a Leave that returned ok: each deleted its member node
// and the last one "ready", so such a round must be empty.
func (w *Barrier) audit(ctx context.Context, env *cluster.Env, n int) error {
	a, err := newAuditor(ctx, env)
	if err != nil {
		return err
	}
	defer a.close()
	w.mu.Lock()
	var rounds []string
	for p, left := range w.left {
		if left >= n {
			rounds = append(rounds, p)
		}
	}
	w.mu.Unlock()
	sort.Strings(rounds)
	var left []string
	for _, p := range rounds {
		kids, err := a.children(ctx, p)
		if err != nil {
			a.litter("nodes of rounds every member left", nil, err)
			return nil
		}
		for _, k := range kids {
			left = append(left, p+"/"+k)
		}
	}
	a.litter(fmt.Sprintf("nodes of the %d rounds every member left", len(rounds)), left, nil)
	return nil
}

func (w *Barrier) member(ctx context.Context, env *cluster.Env, c *cluster.Client, n int, work time.Duration, role barrierRole) error {
	st := env.SessionTimeout
	s, err := connectRecipes(ctx, env, c)
	if s == nil {
		return err
	}
	defer closeRecipes(s, st)
	unusable := watchUnusable(s)
	defer unusable.stop()
	roundPath := func(r int) string { return fmt.Sprintf("%s/db/r%06d", env.Root, r) }
	for round := 1; ctx.Err() == nil; round++ {
		p := roundPath(round)
		if role.pause > 0 && !cluster.Sleep(ctx, role.pause) {
			break
		}
		d, nerr := role.newMember(s, p, n)
		if nerr != nil {
			return fmt.Errorf("chaos: %s: %w", c.Log.Name(), nerr)
		}
		entered := false
		for ctx.Err() == nil {
			op := c.Log.Invoke(history.FnEnter, p, 0)
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
			if d, nerr = role.newMember(s, p, n); nerr != nil {
				return fmt.Errorf("chaos: %s: %w", c.Log.Name(), nerr)
			}
			cluster.Sleep(ctx, 20*time.Millisecond)
		}
		if !entered {
			continue
		}
		session, enteredAt := s.Conn().SessionID(), history.Now()
		lost := func(why string) { // the node went when the session stopped being usable
			c.Log.Event(history.Event{Time: max(enteredAt, unusable.since()), Kind: history.KindLost, Key: p, Detail: why})
		}
		cluster.Sleep(ctx, work)
		if ctx.Err() != nil {
			// Stopping: the member leaves by closing its session (its node
			// goes with it), which lets the others' Leave return. Record
			// that leave, whose outcome this client never learns.
			c.Log.Invoke(history.FnLeave, p, 0).Unknown("stopping: leaves by closing its session")
			break
		}
		if id := s.Conn().SessionID(); id != session {
			lost(fmt.Sprintf("session changed from 0x%x to 0x%x", session, id))
			continue
		}
		op := c.Log.Invoke(history.FnLeave, p, 0)
		err := d.Leave(ctx)
		switch {
		case err == nil:
			op.OK(0)
			w.mu.Lock()
			w.left[p]++
			w.mu.Unlock()
		case errors.Is(err, barrier.ErrMemberLost):
			op.Fail(err.Error())
			lost(err.Error())
		default:
			op.Unknown(err.Error())
		}
	}
	return nil
}

// unusableClock follows a recipes.Session and remembers when it last went
// from usable to unusable (suspended or lost), on the history's clock.
type unusableClock struct {
	at     atomic.Int64
	usable atomic.Bool
	stop   func()
}

// watchUnusable starts following s; call stop when done.
func watchUnusable(s *recipes.Session) *unusableClock {
	u := &unusableClock{}
	st, _, stop := s.OnStateChange(func(sc recipes.StateChange) {
		switch sc.State {
		case recipes.StateConnected, recipes.StateReconnected:
			u.usable.Store(true)
		default:
			if u.usable.Swap(false) {
				u.at.Store(history.Now() - int64(time.Since(sc.At)))
			}
		}
	})
	u.usable.Store(st == recipes.StateConnected || st == recipes.StateReconnected)
	u.stop = stop
	return u
}

// since returns when the session last stopped being usable, or 0.
func (u *unusableClock) since() int64 { return u.at.Load() }
