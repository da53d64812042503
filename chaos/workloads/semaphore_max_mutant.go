package workloads

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/shared"
)

// SemaphoreCache is the semaphore-max mutant and its twin: the
// semaphore-max workload with three holders, the target (c1, the only
// client faults reach) and two bystanders, and a changer on a link of its
// own that keeps the maximum at 1 once the target has been without a
// session for half a session timeout, until 2 s after it has one again
// and the target has held five times since, and otherwise alternates 3
// and 2 every 400 ms: a change made while the target's session was being
// lost, in force while the target acquires with its new session. The
// scenario runs on (cluster.Env.Linger) until that window has closed.
//
// The twin's target uses lock.NewSemaphoreCount, which reads the count
// when it decides. With Mutant set, the target's semaphore (Curator's
// protocol on the same nodes) decides with a copy of the count that a data
// watch keeps up to date, as Curator's semaphore keeps the value its
// SharedCount reports; but where Curator's SharedCount reads the node again
// on reconnection, the mutant sets the watch again only after a change,
// not after its session was lost: once partition-expire has expired the
// target's session, the
// copy stays at the value it had before the fault, 3 or 2, while the
// maximum is 1 (or 2), and the target takes a lease beside a bystander's:
// semaphore-max catches it. Without a fault, and under cut-short (the
// session survives, go-zookeeper sets the watch again on reconnection and
// the server fires it for the change it missed), the copy follows every
// change and the mutant is correct.
type SemaphoreCache struct {
	Mutant bool
}

// Name is "semaphore-cache-mutant", or "semaphore-cache" for the twin.
func (w *SemaphoreCache) Name() string { return mutantName("semaphore-cache", w.Mutant) }

// Checkers are the semaphore-max workload's.
func (w *SemaphoreCache) Checkers(cfg CheckConfig) []checkers.Checker {
	return (&SemaphoreMax{}).Checkers(cfg)
}

// Run runs the target, the bystanders and the changer until ctx is done.
func (w *SemaphoreCache) Run(ctx context.Context, env *cluster.Env) error {
	path, countPath := semaphoreMaxPaths(env)
	correct := countSemaphore(path, countPath)
	var targetHeld atomic.Int64 // the target's holdings so far
	spec := holderSpec{path: path, hold: 20 * time.Millisecond, invokes: true,
		acquirer: func(s *recipes.Session, i int) (func(context.Context) (*holding, error), error) {
			if i != 0 {
				return correct(s, i)
			}
			newAcquire := correct
			if w.Mutant {
				newAcquire = func(s *recipes.Session, _ int) (func(context.Context) (*holding, error), error) {
					return cachedMaxAcquirer(ctx, s, path, countPath)
				}
			}
			acquire, err := newAcquire(s, i)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) (*holding, error) {
				h, err := acquire(ctx)
				if err == nil {
					targetHeld.Add(1)
				}
				return h, err
			}, nil
		}}
	setup, err := setupSemaphoreMax(ctx, env, spec, countPath)
	if err != nil {
		return err
	}
	defer setup.Close()
	cs, closeLinks, err := mutantClients(env, 3, 1)
	if err != nil {
		return err
	}
	defer closeLinks()
	changer, err := newBystander(env, "max")
	if err != nil {
		return err
	}
	defer changer.Link.Close()
	target := cs[0]
	start := time.Now()
	// lostAt: when the target's current outage began (zero while it has a
	// session); downAt: the last time it was seen in an outage of at least
	// half a session timeout. Only such an outage lowers the maximum:
	// partition-expire's aim may reset the target's link a few times before
	// it silences it for good, and a change made during one of those short
	// outages reaches the target when its session, still alive, sets its
	// watches again; half a session timeout into the silence the session is
	// on its way out, and the change is one its watch never delivers.
	var mu sync.Mutex // guards downAt and heldAtDown (the runner reads them through Linger)
	var lostAt, downAt time.Time
	var heldAtDown int64 // targetHeld at downAt
	// lowered reports whether the maximum is held at 1 for the target's
	// new session: from a long outage until 2 s after it and five holdings
	// since. The scenario lingers until that window closes: a run that
	// ends inside it has not exposed the mutant.
	lowered := func(now time.Time) bool {
		mu.Lock()
		defer mu.Unlock()
		return !downAt.IsZero() && (now.Sub(downAt) < 2*time.Second || targetHeld.Load()-heldAtDown < 5)
	}
	env.Linger(func() bool { return lowered(time.Now()) })
	var wg sync.WaitGroup
	var changeErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		changeErr = changeMax(ctx, env, changer, path, countPath, func(int) (int32, time.Duration) {
			now := time.Now()
			switch conn := target.Conn(); {
			case conn == nil || conn.State() == zk.StateHasSession:
				lostAt = time.Time{}
			case lostAt.IsZero():
				lostAt = now
			case now.Sub(lostAt) >= env.SessionTimeout/2:
				mu.Lock()
				downAt, heldAtDown = now, targetHeld.Load()
				mu.Unlock()
			}
			if lowered(now) {
				return 1, 20 * time.Millisecond
			}
			return []int32{3, 2}[int(now.Sub(start)/(400*time.Millisecond))%2], 20 * time.Millisecond
		})
	}()
	err = runHolderClients(ctx, env, setup, spec, len(cs), func(i int) (*cluster.Client, error) { return cs[i], nil })
	wg.Wait()
	if err == nil {
		err = changeErr
	}
	return err
}

// cachedMax is the mutant's copy of the count, kept by a data watch.
type cachedMax struct {
	mu      sync.Mutex
	max     int32
	changed chan struct{} // closed at the next change
}

func (c *cachedMax) get() (int32, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.max, c.changed
}

func (c *cachedMax) set(v int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.max = v
	close(c.changed)
	c.changed = make(chan struct{})
}

// cachedMaxAcquirer returns the mutant target's acquire function: lock.
// Semaphore's protocol (the mutex at <path>/locks, a protected lease under
// <path>/leases, granted while the leases number at most the maximum),
// with the maximum taken from the watched copy of the count.
func cachedMaxAcquirer(ctx context.Context, s *recipes.Session, path, countPath string) (func(context.Context) (*holding, error), error) {
	var data []byte
	var ch <-chan zk.Event
	for {
		var err error
		if data, _, ch, err = s.Conn().GetW(countPath); err == nil {
			break
		}
		if !cluster.Sleep(ctx, 50*time.Millisecond) {
			return nil, fmt.Errorf("chaos: read %s: %w", countPath, err)
		}
	}
	v, err := shared.DecodeCount(data)
	if err != nil {
		return nil, err
	}
	cache := &cachedMax{max: v, changed: make(chan struct{})}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-ch:
				if ev.Type == zk.EventNotWatching {
					return // the bug: the session that held the watch is gone, and it is never set again
				}
			}
			for {
				data, _, w, err := s.Conn().GetW(countPath)
				if err == nil {
					if v, err := shared.DecodeCount(data); err == nil {
						cache.set(v)
					}
					ch = w
					break
				}
				if errors.Is(err, zk.ErrClosing) || !cluster.Sleep(ctx, 50*time.Millisecond) {
					return
				}
			}
		}
	}()
	leases := zkpath.Join(path, "leases")
	return func(ctx context.Context) (*holding, error) {
		mu, err := recipes.Acquire(ctx, s, recipes.Spec{Path: zkpath.Join(path, "locks"), Dialect: recipes.Curator, Role: recipes.RoleLock})
		if err != nil {
			return nil, err
		}
		defer func() { _ = mu.Release(context.WithoutCancel(ctx)) }()
		h, err := recipes.Enter(ctx, s, recipes.Spec{Path: leases, Dialect: recipes.Curator, Role: recipes.RoleLease})
		if err != nil {
			return nil, err
		}
		for {
			if err := errors.Join(mu.Err(), h.Err()); err != nil {
				_ = h.Release(context.WithoutCancel(ctx))
				return nil, fmt.Errorf("chaos: lease or mutex lost: %w", err)
			}
			if h.SessionID() != mu.SessionID() {
				_ = h.Release(context.WithoutCancel(ctx))
				return nil, fmt.Errorf("chaos: lease and mutex of different sessions: %w", recipes.ErrSessionLost)
			}
			children, _, childW, err := s.Conn().ChildrenW(leases)
			if err != nil || !slices.Contains(children, h.Name()) {
				_ = h.Release(context.WithoutCancel(ctx))
				return nil, fmt.Errorf("chaos: list %s: %v", leases, err)
			}
			max, changed := cache.get()
			if len(children) <= int(max) {
				return &holding{held: h.Context(), fence: h.Fence(), release: h.Release}, nil
			}
			select {
			case <-childW:
			case <-changed:
			case <-mu.Context().Done():
			case <-h.Context().Done():
			case <-ctx.Done():
				_ = h.Release(context.WithoutCancel(ctx))
				return nil, ctx.Err()
			}
		}
	}, nil
}
