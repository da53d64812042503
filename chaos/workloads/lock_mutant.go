package workloads

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// This file and the other workload_*_mutant.go files hold the mutants: each
// is the smallest piece of a recipe's behaviour copied into a workload with
// one safety step removed, next to its twin, the same workload with the
// step kept (Mutant false). A mutant must pass without its fault and fail
// under it, caught by the checker MutantCases names; its twin must pass the
// same scenario (same fault, same seed).
//
// Aiming: the fault of a mutant's scenario must hit the one client whose
// safety step is missing, at the moment it matters. The mutant workloads
// register only that client (the target) with cluster.Env.NewClient; the
// others (bystanders) connect through links of their own that the workload
// does not register, so no fault reaches them.

// newBystander returns a workload client on a link of its own that is not
// registered in env: faults leave it alone. The caller closes its link.
func newBystander(env *cluster.Env, name string) (*cluster.Client, error) {
	l, err := env.Ensemble.NewLink(name)
	if err != nil {
		return nil, fmt.Errorf("chaos: link for %s: %w", name, err)
	}
	return &cluster.Client{Name: name, Link: l, Log: env.Rec.Client(name)}, nil
}

// mutantClients makes n clients (at least env.Clients) named c1, c2, ...:
// the first targets are registered in env (faults reach them), the others
// are bystanders. closeLinks closes the bystanders' links (the runner
// closes the targets').
func mutantClients(env *cluster.Env, n, targets int) (cs []*cluster.Client, closeLinks func(), err error) {
	closeLinks = func() {
		for _, c := range cs[min(targets, len(cs)):] {
			_ = c.Link.Close()
		}
	}
	for i := range max(n, env.Clients) {
		name := fmt.Sprintf("c%d", i+1)
		var c *cluster.Client
		if i < targets {
			c, err = env.NewClient(name)
		} else {
			c, err = newBystander(env, name)
		}
		if err != nil {
			closeLinks()
			return nil, func() {}, err
		}
		cs = append(cs, c)
	}
	return cs, closeLinks, nil
}

// LockStepDown is the stepdown mutant and its twin: lock.Mutex clients
// that loop Lock, fenced increments of a counter, Unlock. The target (c1)
// holds for three session timeouts, writing every 100 ms while its
// holding's context is not done; the bystanders hold for two writes.
//
// With Mutant set, the target ignores every loss signal of its holding (as
// a holder under StepDownOnLost ignores suspension, and more: it ignores
// the session's loss too): it believes it holds until it unlocks. Without
// a fault its session never ends, so nobody else holds meanwhile and every
// check passes; under partition-expire the servers expire its session,
// delete its node and a bystander acquires while the target still
// believes it holds: mutual-exclusion catches it. (Fencing still holds:
// its writes check its node, which is gone.) The twin steps down when its
// holding's context is done.
type LockStepDown struct {
	Mutant bool
}

// Name is "lock-stepdown-mutant", or "lock-stepdown" for the twin.
func (w *LockStepDown) Name() string { return mutantName("lock-stepdown", w.Mutant) }

func mutantName(base string, mutant bool) string {
	if mutant {
		return base + "-mutant"
	}
	return base
}

// Checkers: mutual-exclusion, fencing, liveness, no-nodes-left.
func (w *LockStepDown) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.MutualExclusion(1), checkers.FencedWrites(), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// Run makes <root>/lock and <root>/counter = 0 and runs the target and the
// bystanders until ctx is done; then, sessions still open, it records the
// nodes left under the lock, and closes every session.
func (w *LockStepDown) Run(ctx context.Context, env *cluster.Env) error {
	lockPath, counter := env.Root+"/lock", env.Root+"/counter"
	return runAimed(ctx, env, lockPath, counter, func(i int, c *cluster.Client, quiesce func()) error {
		hold, ignore := 10*time.Millisecond, false
		if i == 0 {
			hold, ignore = 3*env.SessionTimeout, w.Mutant
		}
		return w.client(ctx, env, c, lockPath, counter, hold, ignore, quiesce)
	})
}

// runAimed makes the persistent node p and counter = 0, runs client i of
// mutantClients(env, 2, 1) with run until ctx is done, records the nodes
// left under p once every client called its quiesce, and then lets them
// close their sessions.
func runAimed(ctx context.Context, env *cluster.Env, p, counter string, run func(i int, c *cluster.Client, quiesce func()) error) error {
	setup, err := env.ConnectSetup(ctx)
	if err != nil {
		return err
	}
	defer setup.Close()
	acl := env.ACL()
	if _, err := setup.Multi(&zk.CreateRequest{Path: p, Acl: acl}, &zk.CreateRequest{Path: counter, Data: []byte("0"), Acl: acl}); err != nil {
		return fmt.Errorf("chaos: setup of %s: %w", p, err)
	}
	cs, closeLinks, err := mutantClients(env, 2, 1)
	if err != nil {
		return err
	}
	defer closeLinks()
	var (
		stopped, closed sync.WaitGroup
		release         = make(chan struct{})
		mu              sync.Mutex
		errs            []error
	)
	for i, c := range cs {
		stopped.Add(1)
		closed.Add(1)
		go func() {
			defer closed.Done()
			once := sync.OnceFunc(stopped.Done)
			defer once()
			if err := run(i, c, func() { once(); <-release }); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	stopped.Wait()
	recordQuiesced(env, setup, p)
	close(release)
	closed.Wait()
	return errors.Join(errs...)
}

// client runs the lock.Mutex client of aimedHolder; with ignoreLoss, the
// holding's context is not looked at: the client believes it holds until
// it unlocks.
func (w *LockStepDown) client(ctx context.Context, env *cluster.Env, c *cluster.Client, lockPath, counter string, hold time.Duration, ignoreLoss bool, quiesce func()) error {
	return aimedHolder(ctx, env, c, lockPath, counter, hold, quiesce, func(s *recipes.Session) func(context.Context) (*holding, error) {
		m, err := lock.New(s, lockPath)
		if err != nil {
			return func(context.Context) (*holding, error) { return nil, err }
		}
		return func(ctx context.Context) (*holding, error) {
			if err := m.Lock(ctx); err != nil {
				return nil, err
			}
			h := &holding{held: m.Context(), fence: m.Fence(), multi: m.FencedMulti, release: m.Unlock}
			if ignoreLoss { // the mutant: believes it holds until it unlocks
				belief, drop := context.WithCancelCause(context.Background())
				h.held = belief
				h.release = func(ctx context.Context) error {
					drop(recipes.ErrReleased)
					return m.Unlock(ctx)
				}
			}
			return h, nil
		}
	})
}

// aimedHolder is one client of a holder workload with a target: it loops
// acquire, fenced increments of counter every 100 ms (or half of hold)
// until hold passed or the holding's context is done (a holding without
// multi only waits), release, until ctx is done; then it calls quiesce and
// closes its session.
func aimedHolder(ctx context.Context, env *cluster.Env, c *cluster.Client, key, counter string, hold time.Duration, quiesce func(),
	acquirer func(s *recipes.Session) func(context.Context) (*holding, error)) error {
	s, err := connectRecipes(ctx, env, c)
	if s == nil {
		return err
	}
	defer closeRecipes(s, env.SessionTimeout)
	holdLoop(ctx, env, c, s, key, counter, hold, acquirer(s))
	quiesce()
	return nil
}

// holdLoop is aimedHolder's loop on session s, until ctx is done.
func holdLoop(ctx context.Context, env *cluster.Env, c *cluster.Client, s *recipes.Session, key, counter string, hold time.Duration,
	acquire func(context.Context) (*holding, error)) {
	step := min(100*time.Millisecond, hold/2)
	for ctx.Err() == nil {
		h, err := acquire(ctx)
		if err != nil {
			if !cluster.Sleep(ctx, 50*time.Millisecond) {
				break
			}
			continue
		}
		token := h.fence.Token
		c.Log.Acquired(key, token, h.mode)
		watched := watchHolding(c.Log, key, token, h.held)
		if h.multi == nil { // a holding that does not write (a reader)
			holdFor(ctx, h.held, hold)
		}
		for end := time.Now().Add(hold); h.multi != nil && time.Now().Before(end); {
			cluster.Sleep(ctx, step)
			if h.held.Err() != nil || ctx.Err() != nil {
				break
			}
			fencedIncrement(ctx, s.Conn(), c.Log, h.multi, counter, token)
		}
		if h.held.Err() == nil {
			c.Log.Released(key, token)
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), env.SessionTimeout)
		_ = h.release(rctx)
		cancel()
		<-watched
		cluster.Sleep(ctx, 5*time.Millisecond)
	}
}

// watchHolding records the loss of a holding when held is done for any
// cause but a release; the returned channel closes once it has looked.
func watchHolding(log *history.ClientLog, key string, token int64, held context.Context) <-chan struct{} {
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		<-held.Done()
		if cause := context.Cause(held); !errors.Is(cause, recipes.ErrReleased) {
			log.Lost(key, token, fmt.Sprint(cause))
		}
	}()
	return watched
}
