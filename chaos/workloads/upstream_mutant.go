package workloads

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/leader"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/rwlock"
)

// This file holds the upstream bug classes: naive variants of our recipes
// that reproduce, one each, the mechanism of a bug that real users hit in
// another project's recipe (Curator, kazoo, etcd). Each is a mutant in the
// sense of lock_mutant.go (a target client c1 that faults reach, bystanders
// that they do not), with its twin running our recipe in the target's
// place under the same fault. docs/upstream-bugs.md has the table.

// UpstreamBug is a recipe bug that hit another project, and the mutant
// workload that rebuilds its mechanism (Mutant, "" when none is built yet).
type UpstreamBug struct {
	ID     string // "CURATOR-678", "kazoo #760"
	URL    string
	Mutant string
}

// UpstreamBugs lists the upstream bug classes of issue 30, in the issue's
// order; those with a Mutant are in MutantCases.
func UpstreamBugs() []UpstreamBug {
	return []UpstreamBug{
		{"CURATOR-604", "https://github.com/apache/curator/issues/1121", "lock-adopt-mutant"},
		{"CURATOR-678", "https://github.com/apache/curator/issues/1193", "lock-release-mutant"},
		{"CURATOR-696", "https://github.com/apache/curator/issues/1211", "leader-owner-mutant"},
		{"CURATOR-460", "https://github.com/apache/curator/issues/980", "leader-timer-mutant"},
		{"CURATOR-391", "https://github.com/apache/curator/issues/911", "cache-recreate-mutant"},
		{"Curator GH-1290", "https://github.com/apache/curator/pull/1291", "barrier-wake-mutant"},
		{"kazoo #760", "https://github.com/python-zk/kazoo/pull/760", "lock-try-mutant"},
		{"kazoo #282", "https://github.com/python-zk/kazoo/issues/282", "lock-reacquire-mutant"},
		{"kazoo #649", "https://github.com/python-zk/kazoo/issues/649", "rwlock-later-mutant"},
		{"go-zookeeper #229", "https://github.com/samuel/go-zookeeper/issues/229", "lock-create-mutant"},
		{"etcd #19597", "https://github.com/etcd-io/etcd/issues/19597", "lock-gone-mutant"},
		{"etcd #16221", "https://github.com/etcd-io/etcd/issues/16221", "rwlock-gone-mutant"},
	}
}

// UpstreamCases returns the mutant cases of the upstream bug classes that
// have a variant, in the order of UpstreamBugs.
func UpstreamCases() []MutantCase {
	byName := map[string]MutantCase{}
	for _, mc := range MutantCases() {
		byName[mc.Mutant.Name()] = mc
	}
	var out []MutantCase
	for _, b := range UpstreamBugs() {
		if mc, ok := byName[b.Mutant]; ok {
			out = append(out, mc)
		}
	}
	return out
}

// sessionBound returns the context of a naive variant's holding: cancelled
// the moment the connection is suspended, the session sid is lost or
// replaced, or the Session closes. It has no lease (see recipes.LossPolicy:
// a disconnection can be noticed late); the variants that use it hold
// under faults that close connections, or are struck while they wait, so
// the bug each rebuilds is the only way for it to hold too long.
func sessionBound(s *recipes.Session, sid int64) (context.Context, context.CancelCauseFunc) {
	ctx, cancel := context.WithCancelCause(context.Background())
	st, id, stop := s.OnStateChange(func(c recipes.StateChange) {
		switch c.State {
		case recipes.StateSuspended, recipes.StateLost, recipes.StateClosed:
			cancel(fmt.Errorf("chaos: session %s", c.State))
		case recipes.StateConnected, recipes.StateReconnected:
			if c.SessionID != sid {
				cancel(fmt.Errorf("%w: session 0x%x replaced", recipes.ErrSessionLost, sid))
			}
		}
	})
	context.AfterFunc(ctx, stop)
	if !usable(st) || id != sid {
		cancel(fmt.Errorf("chaos: session %s", st))
	}
	return ctx, cancel
}

// nodeHolding builds the holding of a naive variant on its node p, from
// p's stat: token its czxid, writes fenced by it, held while the session
// lasts; release deletes p with retries (as every recipe's release does
// but CURATOR-678's) until it is gone, the session changed, or ctx ends.
func nodeHolding(s *recipes.Session, p, mode string, st *zk.Stat) *holding {
	fence := recipes.Fence{Token: st.Czxid, Path: p, SessionID: st.EphemeralOwner, Version: st.Version}
	held, drop := sessionBound(s, st.EphemeralOwner)
	return &holding{
		mode: mode, held: held, fence: fence,
		multi: func(ctx context.Context, ops ...any) ([]zk.MultiResponse, error) {
			return recipes.FencedMulti(ctx, s, fence, ops...)
		},
		release: func(ctx context.Context) error {
			drop(recipes.ErrReleased)
			return deleteRetried(ctx, s, p, st.EphemeralOwner)
		},
	}
}

// deleteRetried deletes p until it is gone, session sid is no longer the
// Session's, or ctx ends.
func deleteRetried(ctx context.Context, s *recipes.Session, p string, sid int64) error {
	for {
		err := s.Conn().Delete(p, -1)
		if err == nil || errors.Is(err, zk.ErrNoNode) || s.ID() != sid {
			return nil
		}
		if !cluster.Sleep(ctx, 50*time.Millisecond) {
			return err
		}
	}
}

// contenders parses and sorts the children of a Curator recipe's path.
func contenders(children []string, ref int32, roles ...recipes.Role) []recipes.Contender {
	var cs []recipes.Contender
	for _, k := range children {
		if c, ok := recipes.Curator.Parse(k, roles...); ok {
			cs = append(cs, c)
		}
	}
	recipes.SortBySeq(cs, ref)
	return cs
}

// LockRelease is the CURATOR-678 variant and its twin: lock clients that
// loop acquire, fenced increments, release, under the default policy (a
// holding ends when the connection is suspended, as Curator users who
// release on SUSPENDED do). The target (c1) holds for three session
// timeouts, so that the fault finds it holding.
//
// With Mutant set, the target releases as InterProcessMutex.release did
// (CURATOR-678): it forgets its holding first and then deletes its node,
// waiting for the connection within a retry budget and giving up with a
// connection loss past it. The budget is a quarter of the session timeout,
// the ratio of Curator's default connection timeout to its default session
// timeout (15 s to 60 s). Under cut-short the suspension makes it release
// while the connection is down (go-zookeeper waits a second before it
// tries the servers again, so the disconnection outlasts the budget): the
// delete is never sent, the session survives, and the node stays at the
// head of the queue with nobody to delete it; the target's next
// acquisition and every bystander's wait behind it: a stuck lock
// (no-nodes-left sees the node, liveness the stall). The twin's
// lock.Mutex.Unlock hands a delete it could not confirm to a background
// retry that lasts as long as the session.
type LockRelease struct {
	Mutant bool
}

// Name is "lock-release-mutant", or "lock-release" for the twin.
func (w *LockRelease) Name() string { return mutantName("lock-release", w.Mutant) }

// QuickFaults names the faults that expose the lock-release mutant.
func (w *LockRelease) QuickFaults() []string { return mutantFaults["lock-release"] }

// Checkers: mutual-exclusion, fencing, liveness, no-nodes-left.
func (w *LockRelease) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.MutualExclusion(1), checkers.FencedWrites(), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// Run makes <root>/lock and <root>/counter = 0 and runs the target and the
// bystanders until ctx is done.
func (w *LockRelease) Run(ctx context.Context, env *cluster.Env) error {
	lockPath, counter := env.Root+"/lock", env.Root+"/counter"
	return runAimed(ctx, env, lockPath, counter, func(i int, c *cluster.Client, quiesce func()) error {
		hold := 10 * time.Millisecond
		if i == 0 {
			hold = 3 * env.SessionTimeout
		}
		return aimedHolder(ctx, env, c, lockPath, counter, hold, quiesce, func(s *recipes.Session) func(context.Context) (*holding, error) {
			if i == 0 && w.Mutant {
				return func(ctx context.Context) (*holding, error) {
					h, err := recipes.Acquire(ctx, s, recipes.Spec{Path: lockPath})
					if err != nil {
						return nil, err
					}
					return &holding{held: h.Context(), fence: h.Fence(), multi: h.FencedMulti, release: func(context.Context) error {
						// The mutant: the holding is already forgotten; the
						// delete waits for the connection within its budget
						// and is sent once. A failure leaves the node behind.
						if !waitUsable(s, env.SessionTimeout/4) {
							return zk.ErrConnectionClosed
						}
						return s.Conn().Delete(h.Path(), -1)
					}}, nil
				}
			}
			return mutexAcquirer(s, lockPath)
		})
	})
}

// usable reports whether st lets requests reach a server.
func usable(st recipes.State) bool {
	return st == recipes.StateConnected || st == recipes.StateReconnected
}

// waitUsable waits up to budget for s to be usable; false when it is not.
func waitUsable(s *recipes.Session, budget time.Duration) bool {
	for end := time.Now().Add(budget); !usable(s.State()); {
		if time.Now().After(end) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// mutexAcquirer returns the acquire function of a lock.Mutex client of
// aimedHolder.
func mutexAcquirer(s *recipes.Session, lockPath string) func(context.Context) (*holding, error) {
	m, err := lock.New(s, lockPath)
	if err != nil {
		return func(context.Context) (*holding, error) { return nil, err }
	}
	return func(ctx context.Context) (*holding, error) {
		if err := m.Lock(ctx); err != nil {
			return nil, err
		}
		return &holding{held: m.Context(), fence: m.Fence(), multi: m.FencedMulti, release: m.Unlock}, nil
	}
}

// lockTryWorkers is how many non-blocking contenders the target of
// LockTry runs on its one session (kazoo #732's workers ran hundreds).
const lockTryWorkers = 6

// LockTry is the kazoo #760 variant and its twin. The target (c1) runs
// lockTryWorkers goroutines on its session, each looping non-blocking
// acquisitions of the lock without pause, as the workers of kazoo #732
// did; when one gets the lock it holds for one fenced increment and
// releases. The bystanders take the lock with lock.Mutex, hold it 50 ms
// and pause 200 ms, so that it is often held when the target tries and
// sometimes free.
//
// With Mutant set, the target's attempt is kazoo's Lock.acquire(blocking=
// False) before the fix: it creates its node, lists the children and, when
// its node is not first (or the listing failed), deletes the node once and
// swallows the error (_best_effort_cleanup); on a suspended connection
// that delete fails at once. An attempt leaks its node when the connection
// drops between its create and that delete, which a contender is in only
// part of the time (a create or a delete in flight at a drop is applied all
// the same). Under limit-data, which closes the connection after a
// few hundred bytes again and again for about a session timeout, the
// drops are many: some attempt leaks, the session survives, and the node
// is an orphan that reaches the head of the queue once the holders ahead
// leave: a stuck lock (no-nodes-left, liveness). (A single drop, under
// cut-short, left no orphan on one seed of three.) The twin's lock.Mutex.TryLock lists first and
// creates nothing when it would block; a node it created and must give
// up is deleted with retries for as long as the session lives.
type LockTry struct {
	Mutant bool
}

// Name is "lock-try-mutant", or "lock-try" for the twin.
func (w *LockTry) Name() string { return mutantName("lock-try", w.Mutant) }

// QuickFaults names the faults that expose the lock-try mutant.
func (w *LockTry) QuickFaults() []string { return mutantFaults["lock-try"] }

// Checkers: mutual-exclusion, fencing, liveness, no-nodes-left.
func (w *LockTry) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.MutualExclusion(1), checkers.FencedWrites(), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// Run makes <root>/lock and <root>/counter = 0 and runs the target and the
// bystanders until ctx is done.
func (w *LockTry) Run(ctx context.Context, env *cluster.Env) error {
	lockPath, counter := env.Root+"/lock", env.Root+"/counter"
	return runAimed(ctx, env, lockPath, counter, func(i int, c *cluster.Client, quiesce func()) error {
		if i == 0 {
			return w.target(ctx, env, c, lockPath, counter, quiesce)
		}
		return aimedHolder(ctx, env, c, lockPath, counter, 50*time.Millisecond, quiesce, func(s *recipes.Session) func(context.Context) (*holding, error) {
			acquire := mutexAcquirer(s, lockPath)
			return func(ctx context.Context) (*holding, error) {
				if !cluster.Sleep(ctx, 200*time.Millisecond) { // leave the lock free now and then
					return nil, ctx.Err()
				}
				return acquire(ctx)
			}
		})
	})
}

// target runs the non-blocking contenders until ctx is done, then calls
// quiesce and closes its session.
func (w *LockTry) target(ctx context.Context, env *cluster.Env, c *cluster.Client, lockPath, counter string, quiesce func()) error {
	s, err := connectRecipes(ctx, env, c)
	if s == nil {
		return err
	}
	defer closeRecipes(s, env.SessionTimeout)
	var wg sync.WaitGroup
	for range lockTryWorkers {
		try := w.tryer(s, lockPath)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				h, err := try(ctx)
				if err != nil {
					if !errors.Is(err, recipes.ErrWouldBlock) {
						cluster.Sleep(ctx, 10*time.Millisecond)
					}
					continue
				}
				c.Log.Acquired(lockPath, h.fence.Token, "")
				watched := watchHolding(c.Log, lockPath, h.fence.Token, h.held)
				if h.held.Err() == nil && ctx.Err() == nil {
					fencedIncrement(ctx, s.Conn(), c.Log, h.multi, counter, h.fence.Token)
				}
				if h.held.Err() == nil {
					c.Log.Released(lockPath, h.fence.Token)
				}
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), env.SessionTimeout)
				_ = h.release(rctx)
				cancel()
				<-watched
			}
		}()
	}
	wg.Wait()
	quiesce()
	return nil
}

// tryer returns one contender's non-blocking acquisition: lock.Mutex's
// TryLock, or the mutant's.
func (w *LockTry) tryer(s *recipes.Session, lockPath string) func(context.Context) (*holding, error) {
	if w.Mutant {
		return (&naiveTryLock{s: s, path: lockPath}).try
	}
	m, err := lock.New(s, lockPath)
	if err != nil {
		return func(context.Context) (*holding, error) { return nil, err }
	}
	return func(ctx context.Context) (*holding, error) {
		if err := m.TryLock(ctx); err != nil {
			return nil, err
		}
		return &holding{held: m.Context(), fence: m.Fence(), multi: m.FencedMulti, release: m.Unlock}, nil
	}
}

// naiveTryLock is kazoo's non-blocking Lock.acquire before PR #760, in
// Curator's node names (so that it shares the lock with lock.Mutex).
type naiveTryLock struct {
	s    *recipes.Session
	path string
}

func (l *naiveTryLock) try(ctx context.Context) (*holding, error) {
	guid := recipes.Curator.NewGUID()
	prefix, err := recipes.Curator.NodePrefix(guid, recipes.RoleLock)
	if err != nil {
		return nil, err
	}
	created, err := l.s.Conn().Create(l.path+"/"+prefix, nil, zk.FlagEphemeralSequential, l.s.ACLFor(l.path))
	if err != nil {
		// kazoo retries the attempt and finds a node its create may have
		// made by its GUID: resolved here, so that no node is lost this way.
		if created, err = l.find(ctx, guid); err != nil || created == "" {
			return nil, fmt.Errorf("chaos: naive try lock: create: %w", errors.Join(err, recipes.ErrWouldBlock))
		}
	}
	me, _ := recipes.Curator.Parse(path.Base(created), recipes.RoleLock)
	kids, _, err := l.s.Conn().Children(l.path)
	if err == nil {
		if cs := contenders(kids, me.Seq, recipes.RoleLock); len(cs) > 0 && cs[0].Name == me.Name {
			if _, st, err := l.s.Conn().Get(created); err == nil {
				return nodeHolding(l.s, created, "", st), nil
			}
		}
	}
	// The mutant: kazoo's _best_effort_cleanup, one delete whose error is
	// swallowed; on a suspended connection it fails at once (kazoo raised
	// ConnectionLoss), and the node stays.
	if usable(l.s.State()) {
		_ = l.s.Conn().Delete(created, -1)
	}
	return nil, recipes.ErrWouldBlock
}

// find lists the lock's children, once the Session is usable, for the node
// with guid; "" when there is none. It gives up only when ctx ends.
func (l *naiveTryLock) find(ctx context.Context, guid string) (string, error) {
	for {
		if usable(l.s.State()) {
			kids, _, err := l.s.Conn().Children(l.path)
			if err == nil {
				for _, k := range kids {
					if recipes.Curator.HasGUID(k, guid) {
						return l.path + "/" + k, nil
					}
				}
				return "", nil
			}
		}
		if !cluster.Sleep(ctx, 20*time.Millisecond) {
			return "", ctx.Err()
		}
	}
}

// LeaderTimer is the CURATOR-460 variant and its twin: leader.Election
// participants under StepDownOnLost (a leader keeps its term through a
// short disconnection, as under Curator's session-only error policy) that
// loop Campaign, fenced increments every 100 ms, Release. The target (c1)
// keeps each term for three session timeouts; the bystanders resign after
// two writes.
//
// With Mutant set, the target is a latch on the contender core (the same
// nodes and wait as leader.Election, without its owner check, which the
// core's own check makes moot here) whose term ends the way Curator's did
// before CURATOR-460: when the session is found expired on reconnection, or when
// a timer of one session timeout, started at the moment the client
// noticed the suspension, runs out. The client notices only after its read
// timeout (two thirds of the session timeout after the last frame), so the
// timer ends five thirds of a session timeout after the server last heard
// from it, two thirds after the server may have expired the session. Under
// partition-expire the servers expire its session, a bystander leads, and
// the target leads on until its timer or its reconnection tells it:
// single-leader catches the overlap. The twin's term ends at the session's
// lease deadline, counted from the last frame the server answered, before
// the server can expire the session.
type LeaderTimer struct {
	Mutant bool
}

// Name is "leader-timer-mutant", or "leader-timer" for the twin.
func (w *LeaderTimer) Name() string { return mutantName("leader-timer", w.Mutant) }

// QuickFaults names the faults that expose the leader-timer mutant.
func (w *LeaderTimer) QuickFaults() []string { return mutantFaults["leader-timer"] }

// Checkers: single-leader, fencing, liveness, no-nodes-left.
func (w *LeaderTimer) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.SingleLeader(), checkers.FencedWrites(), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// Run makes <root>/election and <root>/counter = 0 and runs the target and
// the bystanders until ctx is done.
func (w *LeaderTimer) Run(ctx context.Context, env *cluster.Env) error {
	election, counter := env.Root+"/election", env.Root+"/counter"
	return runAimed(ctx, env, election, counter, func(i int, c *cluster.Client, quiesce func()) error {
		hold := 10 * time.Millisecond
		if i == 0 {
			hold = 3 * env.SessionTimeout
		}
		return aimedHolder(ctx, env, c, election, counter, hold, quiesce, func(s *recipes.Session) func(context.Context) (*holding, error) {
			if i == 0 && w.Mutant {
				// The latch: the contender core's node and wait (Curator's
				// latch nodes), the term's end the mutant's own. Not
				// leader.Election, whose term deletes our node when our
				// lease runs out.
				spec := recipes.Spec{Path: election, Role: recipes.RoleLatch, Data: []byte(c.Name), Policy: recipes.StepDownOnLost}
				return func(ctx context.Context) (*holding, error) {
					h, err := recipes.Acquire(ctx, s, spec)
					if err != nil {
						return nil, err
					}
					held, drop := suspendedTimer(s, h.SessionID(), env.SessionTimeout)
					return &holding{held: held, fence: h.Fence(), multi: h.FencedMulti, release: func(ctx context.Context) error {
						drop(recipes.ErrReleased)
						return h.Release(ctx)
					}}, nil
				}
			}
			e, err := leader.New(s, election, leader.WithData([]byte(c.Name)), leader.WithLossPolicy(recipes.StepDownOnLost))
			if err != nil {
				return func(context.Context) (*holding, error) { return nil, err }
			}
			return func(ctx context.Context) (*holding, error) {
				t, err := e.Campaign(ctx)
				if err != nil {
					return nil, err
				}
				return &holding{held: t.Context(), fence: t.Fence(), multi: t.FencedMulti, release: t.Release}, nil
			}
		})
	})
}

// suspendedTimer is the term context of the CURATOR-460 mutant: cancelled
// when the Session reconnects under another session than sid (the expiry
// learnt on reconnection), when it closes, or when it has stayed suspended
// for tolerance counted from the suspension's notice. It ignores the
// Session's lease (its StateLost without a new session).
func suspendedTimer(s *recipes.Session, sid int64, tolerance time.Duration) (context.Context, context.CancelCauseFunc) {
	ctx, cancel := context.WithCancelCause(context.Background())
	var (
		mu    sync.Mutex
		timer *time.Timer
	)
	_, id, stop := s.OnStateChange(func(c recipes.StateChange) {
		mu.Lock()
		defer mu.Unlock()
		switch c.State {
		case recipes.StateSuspended:
			if timer == nil {
				timer = time.AfterFunc(tolerance, func() {
					cancel(fmt.Errorf("%w: suspended for %v", recipes.ErrSessionLost, tolerance))
				})
			}
		case recipes.StateConnected, recipes.StateReconnected:
			if c.SessionID != sid {
				cancel(fmt.Errorf("%w: session 0x%x expired", recipes.ErrSessionLost, sid))
			} else if timer != nil {
				timer.Stop()
				timer = nil
			}
		case recipes.StateClosed:
			cancel(recipes.ErrClosed)
		}
	})
	context.AfterFunc(ctx, func() {
		stop()
		mu.Lock()
		if timer != nil {
			timer.Stop()
		}
		mu.Unlock()
	})
	if id != sid {
		cancel(fmt.Errorf("%w: session 0x%x replaced", recipes.ErrSessionLost, sid))
	}
	return ctx, cancel
}

// RWLockGone is the etcd #16221 variant and its twin: writers of a
// read/write lock that loop Lock, fenced increments, Unlock. The bystanders
// (rwlock.RWMutex writers) hold for half a session timeout, so that the
// target (c1), which holds for 10 ms, is almost always waiting behind
// them when the fault strikes.
//
// With Mutant set, the target writes as etcd's RWMutex.Lock did before the
// fix: it creates its node once and waits until no node with a lower
// sequence number is left, never checking that its own node is still
// there. Under partition-expire@waiter its session expires while it waits
// and its node goes with it; the bystander queued behind that node stops
// waiting for it; once the nodes ahead are gone, both hold the write lock:
// writer-exclusive catches the overlap. The twin's writer (the contender
// core) starts over with a new node when its session changes, and holds
// only on a listing that shows its node, owned by its current session.
type RWLockGone struct {
	Mutant bool
}

// Name is "rwlock-gone-mutant", or "rwlock-gone" for the twin.
func (w *RWLockGone) Name() string { return mutantName("rwlock-gone", w.Mutant) }

// QuickFaults names the faults that expose the rwlock-gone mutant.
func (w *RWLockGone) QuickFaults() []string { return mutantFaults["rwlock-gone"] }

// Checkers: writer-exclusive, fencing, liveness, no-nodes-left.
func (w *RWLockGone) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.WriterExclusive(), checkers.FencedWrites(), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// Run makes <root>/rwlock and <root>/counter = 0 and runs the target and
// the bystanders until ctx is done.
func (w *RWLockGone) Run(ctx context.Context, env *cluster.Env) error {
	lockPath, counter := env.Root+"/rwlock", env.Root+"/counter"
	return runAimed(ctx, env, lockPath, counter, func(i int, c *cluster.Client, quiesce func()) error {
		hold := env.SessionTimeout / 2
		if i == 0 {
			hold = 10 * time.Millisecond
		}
		return aimedHolder(ctx, env, c, lockPath, counter, hold, quiesce, func(s *recipes.Session) func(context.Context) (*holding, error) {
			if i == 0 && w.Mutant {
				return (&goneWaiter{s: s, path: lockPath}).lock
			}
			m, err := rwlock.New(s, lockPath)
			if err != nil {
				return func(context.Context) (*holding, error) { return nil, err }
			}
			return func(ctx context.Context) (*holding, error) {
				if err := m.Lock(ctx); err != nil {
					return nil, err
				}
				return &holding{mode: "write", held: m.Context(), fence: m.Fence(), multi: m.FencedMulti, release: m.Unlock}, nil
			}
		})
	})
}

// goneWaiter is a waiter of etcd's concurrency recipes before the fixes
// of #16221 (RWMutex) and #19597 (Mutex), on ZooKeeper nodes in Curator's
// names: it creates its node once and waits until no node with a lower
// sequence number is left, never asking whether its own node (and its
// session) is still there. Its role is RoleWrite (a writer of the rw
// lock) when zero, or RoleLock (a mutex waiter).
type goneWaiter struct {
	s    *recipes.Session
	path string
	role recipes.Role
}

func (w *goneWaiter) lock(ctx context.Context) (*holding, error) {
	role, roles, mode := w.role, []recipes.Role{recipes.RoleRead, recipes.RoleWrite}, "write"
	if role == 0 {
		role = recipes.RoleWrite
	} else if role == recipes.RoleLock {
		roles, mode = []recipes.Role{recipes.RoleLock}, ""
	}
	prefix, err := recipes.Curator.NodePrefix(recipes.Curator.NewGUID(), role)
	if err != nil {
		return nil, err
	}
	created, err := w.s.Conn().Create(w.path+"/"+prefix, nil, zk.FlagEphemeralSequential, w.s.ACLFor(w.path))
	if err != nil {
		return nil, fmt.Errorf("chaos: naive waiter: %w", err)
	}
	_, st, err := w.s.Conn().Get(created)
	if err != nil {
		_ = w.s.Conn().Delete(created, -1)
		return nil, fmt.Errorf("chaos: naive waiter: %w", err)
	}
	me, _ := recipes.Curator.Parse(path.Base(created), role)
	for {
		if ctx.Err() != nil {
			_ = w.s.Conn().Delete(created, -1)
			return nil, ctx.Err()
		}
		kids, _, err := w.s.Conn().Children(w.path)
		if err != nil {
			cluster.Sleep(ctx, 50*time.Millisecond)
			continue
		}
		// The mutant: only the nodes below ours count; whether ours is
		// still in the list is never asked.
		var below []recipes.Contender
		for _, c := range contenders(kids, me.Seq, roles...) {
			if c.Seq < me.Seq {
				below = append(below, c)
			}
		}
		if len(below) == 0 {
			break
		}
		_, _, ch, err := w.s.Conn().GetW(w.path + "/" + below[len(below)-1].Name)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			continue
		case err != nil:
			cluster.Sleep(ctx, 50*time.Millisecond)
			continue
		}
		select {
		case <-ctx.Done():
		case <-ch:
		}
	}
	// It holds on the stat of its create, under the Session's current
	// session (etcd's holder has no loss signal at all; this one at least
	// steps down with its session).
	h := nodeHolding(w.s, created, mode, st)
	held, drop := sessionBound(w.s, w.s.ID())
	h.held = held
	release := h.release
	h.release = func(ctx context.Context) error {
		drop(recipes.ErrReleased)
		return release(ctx)
	}
	return h, nil
}

// RWLockLater is the kazoo #649 variant and its twin. The target (c1)
// reads: it loops Reader().Lock, 300 ms of holding, Reader().Unlock; the bystanders
// (rwlock.RWMutex writers) loop Lock, two fenced increments, Unlock.
//
// With Mutant set, the target's reader picks the node to wait for as
// kazoo's ReadLock did before 2.9: the last writer among all the nodes,
// its own sequence number notwithstanding. Once a writer queues behind
// it, the reader waits for that writer, which waits for the reader: a
// deadlock that holds every later client until the scenario ends (liveness
// catches it). No fault is needed: any reader that a writer follows in the
// queue deadlocks; the scenario's fault (latency-low) only slows the
// clients. The twin's reader (an rwlock.RWMutex's Reader().Lock) waits only for the
// last writer ahead of it.
type RWLockLater struct {
	Mutant bool
}

// Name is "rwlock-later-mutant", or "rwlock-later" for the twin.
func (w *RWLockLater) Name() string { return mutantName("rwlock-later", w.Mutant) }

// QuickFaults names the scenario's fault of the rwlock-later mutant (the
// mutant deadlocks without one).
func (w *RWLockLater) QuickFaults() []string { return mutantFaults["rwlock-later"] }

// Checkers: writer-exclusive, fencing, liveness, no-nodes-left.
func (w *RWLockLater) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.WriterExclusive(), checkers.FencedWrites(), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// Run makes <root>/rwlock and <root>/counter = 0 and runs the target and
// the bystanders until ctx is done.
func (w *RWLockLater) Run(ctx context.Context, env *cluster.Env) error {
	lockPath, counter := env.Root+"/rwlock", env.Root+"/counter"
	return runAimed(ctx, env, lockPath, counter, func(i int, c *cluster.Client, quiesce func()) error {
		hold := 10 * time.Millisecond
		if i == 0 {
			hold = 300 * time.Millisecond
		}
		return aimedHolder(ctx, env, c, lockPath, counter, hold, quiesce, func(s *recipes.Session) func(context.Context) (*holding, error) {
			if i == 0 && w.Mutant {
				return (&laterReader{s: s, path: lockPath}).rlock
			}
			m, err := rwlock.New(s, lockPath)
			if err != nil {
				return func(context.Context) (*holding, error) { return nil, err }
			}
			if i == 0 {
				return func(ctx context.Context) (*holding, error) {
					if err := m.Reader().Lock(ctx); err != nil {
						return nil, err
					}
					return &holding{mode: "read", held: m.Reader().Context(), fence: m.Reader().Fence(), release: m.Reader().Unlock}, nil
				}
			}
			return func(ctx context.Context) (*holding, error) {
				if err := m.Lock(ctx); err != nil {
					return nil, err
				}
				return &holding{mode: "write", held: m.Context(), fence: m.Fence(), multi: m.FencedMulti, release: m.Unlock}, nil
			}
		})
	})
}

// laterReader is kazoo's ReadLock before 2.9, on Curator's node names.
type laterReader struct {
	s    *recipes.Session
	path string
}

func (r *laterReader) rlock(ctx context.Context) (*holding, error) {
	prefix, err := recipes.Curator.NodePrefix(recipes.Curator.NewGUID(), recipes.RoleRead)
	if err != nil {
		return nil, err
	}
	created, err := r.s.Conn().Create(r.path+"/"+prefix, nil, zk.FlagEphemeralSequential, r.s.ACLFor(r.path))
	if err != nil {
		return nil, fmt.Errorf("chaos: naive reader: %w", err)
	}
	me, _ := recipes.Curator.Parse(path.Base(created), recipes.RoleRead)
	abandon := func(err error) (*holding, error) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.s.SessionTimeout())
		defer cancel()
		_ = deleteRetried(rctx, r.s, created, r.s.ID())
		return nil, err
	}
	for {
		if ctx.Err() != nil {
			return abandon(ctx.Err())
		}
		kids, _, err := r.s.Conn().Children(r.path)
		if err != nil {
			cluster.Sleep(ctx, 50*time.Millisecond)
			continue
		}
		// The mutant: the last writer of the whole queue, even one that
		// came after us, is the one to wait for.
		var last string
		for _, c := range contenders(kids, me.Seq, recipes.RoleWrite) {
			last = c.Name
		}
		if last == "" {
			break
		}
		_, _, ch, err := r.s.Conn().GetW(r.path + "/" + last)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			continue
		case err != nil:
			cluster.Sleep(ctx, 50*time.Millisecond)
			continue
		}
		select {
		case <-ctx.Done():
		case <-ch:
		}
	}
	_, st, err := r.s.Conn().Get(created)
	if err != nil {
		return abandon(fmt.Errorf("chaos: naive reader: %w", err))
	}
	h := nodeHolding(r.s, created, "read", st)
	h.multi = nil // readers do not write
	return h, nil
}

// LockCreate is the go-zookeeper #229 variant and its twin: lock clients
// that loop acquire, fenced increments, release; the target (c1) holds for
// 10 ms like the bystanders (lock.Mutex).
//
// With Mutant set, the target's lock is go-zookeeper's own zk.Lock
// (v1.0.4, which still has the bug), not a rewrite: its protected create,
// when the reply is lost with the connection, lists the parent at once to
// find its node, and that listing fails on the connection that is still
// down; it returns the error, and the node its create made stays with the
// live session. Its wait returns on any error of its listing or watch
// without deleting its node either. Its names ("_c_<32 hex>-lock-<seq>")
// sort with lock.Mutex's ("lock-<seq>" is what both order by). Under
// limit-data its connection is dropped again and again: a node is left
// behind, reaches the head of the queue and stays there: a stuck lock
// (no-nodes-left, liveness). The twin's lock.Mutex resolves an ambiguous
// create by its GUID once the connection is back, and deletes in the
// background whatever it gives up.
type LockCreate struct {
	Mutant bool
}

// Name is "lock-create-mutant", or "lock-create" for the twin.
func (w *LockCreate) Name() string { return mutantName("lock-create", w.Mutant) }

// QuickFaults names the faults that expose the lock-create mutant.
func (w *LockCreate) QuickFaults() []string { return mutantFaults["lock-create"] }

// Checkers: mutual-exclusion, fencing, liveness, no-nodes-left.
func (w *LockCreate) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.MutualExclusion(1), checkers.FencedWrites(), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// Run makes <root>/lock and <root>/counter = 0 and runs the target and the
// bystanders until ctx is done.
func (w *LockCreate) Run(ctx context.Context, env *cluster.Env) error {
	lockPath, counter := env.Root+"/lock", env.Root+"/counter"
	return runAimed(ctx, env, lockPath, counter, func(i int, c *cluster.Client, quiesce func()) error {
		return aimedHolder(ctx, env, c, lockPath, counter, 10*time.Millisecond, quiesce, func(s *recipes.Session) func(context.Context) (*holding, error) {
			if i == 0 && w.Mutant {
				return func(ctx context.Context) (*holding, error) { return goZKLock(ctx, s, lockPath) }
			}
			return mutexAcquirer(s, lockPath)
		})
	})
}

// goZKLock takes the lock with a new zk.Lock. zk.Lock.Lock takes no ctx:
// when ctx ends first, a goroutine waits for it and unlocks what it gets,
// so that only the nodes the bug leaves stay behind.
func goZKLock(ctx context.Context, s *recipes.Session, lockPath string) (*holding, error) {
	l := zk.NewLock(s.Conn(), lockPath, s.ACLFor(lockPath))
	sid := s.ID()
	done := make(chan error, 1)
	go func() { done <- l.Lock() }()
	select {
	case <-ctx.Done():
		go func() {
			if <-done == nil {
				_ = l.Unlock()
			}
		}()
		return nil, ctx.Err()
	case err := <-done:
		if err != nil {
			return nil, fmt.Errorf("chaos: zk.Lock: %w", err)
		}
	}
	// zk.Lock keeps its node's path to itself: the head of the queue is
	// ours once it holds.
	kids, _, err := s.Conn().Children(lockPath)
	var st *zk.Stat
	var head string
	if err == nil {
		if cs := contenders(kids, 0, recipes.RoleLock); len(cs) > 0 {
			head = lockPath + "/" + cs[0].Name
			_, st, err = s.Conn().Get(head)
		}
	}
	if err != nil || st == nil || st.EphemeralOwner != sid {
		_ = l.Unlock()
		return nil, fmt.Errorf("chaos: zk.Lock: cannot tell its node: %v", err)
	}
	h := nodeHolding(s, head, "", st)
	release := h.release
	h.release = func(ctx context.Context) error {
		_ = l.Unlock()      // one delete; its failure is retried below
		return release(ctx) // ends the holding's context, deletes until gone
	}
	return h, nil
}
