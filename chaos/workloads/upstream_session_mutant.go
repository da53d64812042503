package workloads

import (
	"context"
	"errors"
	"path"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// This file holds the upstream bug classes of a lock whose acquisition
// outlives its session: etcd #19597 (a waiter whose session expired) and
// CURATOR-604 (an acquisition that takes the node of the session it gave
// up). docs/upstream-bugs.md has the table.

// LockGone is the etcd #19597 variant and its twin: lock clients that loop
// acquire, fenced increments, release. The bystanders (lock.Mutex) hold
// for half a session timeout, so that the target (c1), which holds for
// 10 ms, is almost always waiting behind them when the fault strikes.
//
// With Mutant set, the target waits as etcd's Mutex.Lock did before the
// fix (waitDeletes watched the keys ahead, not its own session): it
// creates its node once and waits until no node with a lower sequence
// number is left, never checking that its own node is still there. Under
// partition-expire@waiter its session expires while it waits and its node
// goes with it; the bystander queued behind that node stops waiting for
// it; once the nodes ahead are gone, both hold: mutual-exclusion catches
// the overlap. The twin (lock.Mutex, the contender core) starts over with
// a new node when its session changes while it waits (contend), and holds
// only on a listing that shows its node, owned by its current session.
type LockGone struct {
	Mutant bool
}

// Name is "lock-gone-mutant", or "lock-gone" for the twin.
func (w *LockGone) Name() string { return mutantName("lock-gone", w.Mutant) }

// QuickFaults names the faults that expose the lock-gone mutant.
func (w *LockGone) QuickFaults() []string { return mutantFaults["lock-gone"] }

// Checkers: mutual-exclusion, fencing, liveness, no-nodes-left.
func (w *LockGone) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.MutualExclusion(1), checkers.FencedWrites(), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// Run makes <root>/lock and <root>/counter = 0 and runs the target and the
// bystanders until ctx is done.
func (w *LockGone) Run(ctx context.Context, env *cluster.Env) error {
	lockPath, counter := env.Root+"/lock", env.Root+"/counter"
	return runAimed(ctx, env, lockPath, counter, func(i int, c *cluster.Client, quiesce func()) error {
		hold := env.SessionTimeout / 2
		if i == 0 {
			hold = 10 * time.Millisecond
		}
		return aimedHolder(ctx, env, c, lockPath, counter, hold, quiesce, func(s *recipes.Session) func(context.Context) (*holding, error) {
			if i == 0 && w.Mutant {
				return (&goneWaiter{s: s, path: lockPath, role: recipes.RoleLock}).lock
			}
			return mutexAcquirer(s, lockPath)
		})
	})
}

// LockAdopt is the CURATOR-604 variant and its twin: lock clients that
// loop acquire, fenced increments, release. The target (c1) runs two
// workers on its one session, each with its own lock object on the same
// path (two threads of one process, each with its InterProcessMutex), each
// holding for 1.4 session timeouts; they take turns (a worker queues 50 ms
// after the other acquired, behind the bystanders, which get the lock
// between the target's holdings): the target almost always holds, with its
// other worker queued. The bystanders (lock.Mutex) hold for 10 ms.
// half-open strikes the target while it holds: its requests reach the
// servers, their answers are lost. The target's client gives its session
// up when the session's lease runs out, a client-side timer, as Curator
// does when it declares the connection LOST and opens a new ZooKeeper
// handle: it does not close the session (nothing could tell the server),
// and its next connection asks for a new session (testenv.SessionDropper).
// The old session lives on at the server a session timeout past the last
// request it heard, which under half-open is when go-zookeeper's read
// timeout or the heal ends the connection, while the new session connects
// at the heal: the window of CURATOR-604, a new session that sees the old
// session's nodes.
//
// With Mutant set, the workers' acquisition is Curator's protected create
// as CURATOR-604 found it (adoptingLock): one GUID for the acquisition,
// and every retry (after a create whose reply was lost, or a wait cut
// short by a connection error or a session change) first lists the parent
// for a node with that GUID and takes it, never asking who owns it. Under
// the new session the queued worker finds its node of the old session,
// waits on it and holds; the server expires the old session and deletes
// that node, and the bystander queued behind it acquires while the worker
// still holds (the worker holds 1.4 session timeouts from the new
// session, the old one outlives the heal by at most a timeout and a tick):
// mutual-exclusion catches the overlap. The twin's workers
// (lock.Mutex) keep a node found by its GUID only when the current session
// owns it (recipes/create.go adopt, after an ambiguous create: findOwn),
// and a wait whose session changed starts over with a new node
// (recipes/contender.go contend) whose listing deletes the old one
// (order). Under latency-low the lease never runs out: no new session, no
// window, and the mutant passes.
type LockAdopt struct {
	Mutant bool
}

// Name is "lock-adopt-mutant", or "lock-adopt" for the twin.
func (w *LockAdopt) Name() string { return mutantName("lock-adopt", w.Mutant) }

// QuickFaults names the faults that expose the lock-adopt mutant.
func (w *LockAdopt) QuickFaults() []string { return mutantFaults["lock-adopt"] }

// Checkers: mutual-exclusion, fencing, liveness, no-nodes-left.
func (w *LockAdopt) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.MutualExclusion(1), checkers.FencedWrites(), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// lockAdoptWorkers is how many workers the target of LockAdopt runs.
const lockAdoptWorkers = 2

// Run makes <root>/lock and <root>/counter = 0 and runs the target and the
// bystanders until ctx is done.
func (w *LockAdopt) Run(ctx context.Context, env *cluster.Env) error {
	lockPath, counter := env.Root+"/lock", env.Root+"/counter"
	return runAimed(ctx, env, lockPath, counter, func(i int, c *cluster.Client, quiesce func()) error {
		if i == 0 {
			return w.target(ctx, env, c, lockPath, counter, quiesce)
		}
		return aimedHolder(ctx, env, c, lockPath, counter, 10*time.Millisecond, quiesce, func(s *recipes.Session) func(context.Context) (*holding, error) {
			return mutexAcquirer(s, lockPath)
		})
	})
}

// target runs the target's workers on a session that it gives up when
// its lease runs out, until ctx is done; then it calls quiesce and closes
// the session.
func (w *LockAdopt) target(ctx context.Context, env *cluster.Env, c *cluster.Client, lockPath, counter string, quiesce func()) error {
	d := &testenv.SessionDropper{Base: c.Dial}
	s, err := connectRecipes(ctx, env, c, recipes.WithDialer(d.Dial))
	if s == nil {
		return err
	}
	defer closeRecipes(s, env.SessionTimeout)
	dropOnLeaseEnd(s, d)
	var turns [lockAdoptWorkers]chan struct{}
	for i := range turns {
		turns[i] = make(chan struct{}, 1)
	}
	turns[0] <- struct{}{}
	var wg sync.WaitGroup
	for i := range lockAdoptWorkers {
		acquire := mutexAcquirer(s, lockPath)
		if w.Mutant {
			acquire = (&adoptingLock{s: s, path: lockPath}).lock
		}
		acquire = takeTurns(acquire, turns[i], turns[(i+1)%lockAdoptWorkers])
		wg.Add(1)
		go func() {
			defer wg.Done()
			holdLoop(ctx, env, c, s, lockPath, counter, 7*env.SessionTimeout/5, acquire)
		}()
	}
	wg.Wait()
	quiesce()
	return nil
}

// takeTurns wraps a worker's acquire: it waits for the worker's turn
// before it queues, and 50 ms after it acquired it gives the turn to the
// next worker. A failed acquisition keeps the turn. Called from the
// worker's goroutine only.
func takeTurns(acquire func(context.Context) (*holding, error), mine, next chan struct{}) func(context.Context) (*holding, error) {
	waited := false
	return func(ctx context.Context) (*holding, error) {
		if !waited {
			select {
			case <-mine:
				waited = true
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		h, err := acquire(ctx)
		if err != nil {
			return nil, err
		}
		waited = false
		time.AfterFunc(50*time.Millisecond, func() {
			select {
			case next <- struct{}{}:
			default:
			}
		})
		return h, nil
	}
}

// dropOnLeaseEnd gives s's session up (d.Drop) every time the session's
// lease runs out, until s is closed: the client-side timer of CURATOR-604.
// After a drop it waits for the next session before it watches that
// session's lease.
func dropOnLeaseEnd(s *recipes.Session, d *testenv.SessionDropper) {
	closed := make(chan struct{})
	var once sync.Once
	_, _, stop := s.OnStateChange(func(c recipes.StateChange) {
		if c.State == recipes.StateClosed {
			once.Do(func() { close(closed) })
		}
	})
	go func() {
		defer stop()
		for {
			sid := s.ID()
			ended := make(chan struct{})
			var eonce sync.Once
			cancel := s.OnLeaseExpired(func(error) { eonce.Do(func() { close(ended) }) })
			select {
			case <-closed:
				cancel()
				return
			case <-ended:
			}
			cancel()
			if sid != 0 {
				d.Drop(sid)
			}
			for s.ID() == sid || !usable(s.State()) {
				select {
				case <-closed:
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}
	}()
}

// adoptingLock is Curator's InterProcessMutex acquisition with the
// protected create of CURATOR-604, on Curator's node names: one GUID per
// acquisition, and every retry first lists the parent for a node carrying
// it and takes that node, whoever owns it. A node missing from a listing
// (Curator's NoNodeException) is created again. Its holding lasts while
// the current session is connected (the CURATOR-604 reporter released on
// SUSPENDED and LOST).
type adoptingLock struct {
	s    *recipes.Session
	path string
}

func (l *adoptingLock) lock(ctx context.Context) (*holding, error) {
	guid := recipes.Curator.NewGUID()
	prefix, err := recipes.Curator.NodePrefix(guid, recipes.RoleLock)
	if err != nil {
		return nil, err
	}
	conn := l.s.Conn()
	node := "" // our node; "" when the next round must find or create it
	for {
		if ctx.Err() != nil {
			l.cleanup(guid)
			return nil, ctx.Err()
		}
		if !usable(l.s.State()) {
			cluster.Sleep(ctx, 20*time.Millisecond)
			continue
		}
		sid := l.s.ID()
		if node == "" {
			found, err := l.find(guid)
			if err != nil {
				cluster.Sleep(ctx, 20*time.Millisecond)
				continue
			}
			if found == "" {
				created, err := conn.Create(l.path+"/"+prefix, nil, zk.FlagEphemeralSequential, l.s.ACLFor(l.path))
				if err != nil {
					// A reply lost with the connection: the next round
					// finds the node by its GUID if the create was applied.
					cluster.Sleep(ctx, 20*time.Millisecond)
					continue
				}
				found = created
			}
			node = found
		}
		kids, _, err := conn.Children(l.path)
		if err != nil {
			node = ""
			cluster.Sleep(ctx, 20*time.Millisecond)
			continue
		}
		me, _ := recipes.Curator.Parse(path.Base(node), recipes.RoleLock)
		cs := contenders(kids, me.Seq, recipes.RoleLock)
		i := slices.IndexFunc(cs, func(c recipes.Contender) bool { return c.Name == me.Name })
		switch {
		case i < 0:
			node = "" // gone: create again
			continue
		case i == 0:
			_, st, err := conn.Get(node)
			if err != nil {
				node = ""
				continue
			}
			return l.holding(node, st, sid), nil
		}
		_, _, ch, err := conn.GetW(l.path + "/" + cs[i-1].Name)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			continue
		case err != nil:
			node = ""
			cluster.Sleep(ctx, 20*time.Millisecond)
			continue
		}
		if !l.wait(ctx, ch, sid) {
			node = "" // a connection or session change: retry, finding our node again
		}
	}
}

// find lists the lock for the node with guid: the mutant's adoption, with
// no look at the node's owner. "" when there is none.
func (l *adoptingLock) find(guid string) (string, error) {
	kids, _, err := l.s.Conn().Children(l.path)
	if err != nil {
		return "", err
	}
	for _, k := range kids {
		if recipes.Curator.HasGUID(k, guid) {
			return l.path + "/" + k, nil
		}
	}
	return "", nil
}

// wait waits for the watch event ch; false (retry) when the session sid is
// no longer usable first, or ctx ends.
func (l *adoptingLock) wait(ctx context.Context, ch <-chan zk.Event, sid int64) bool {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-ch:
			return true
		case <-tick.C:
			if l.s.ID() != sid || !usable(l.s.State()) {
				return false
			}
		}
	}
}

// holding builds the holding on node, held while session sid is connected.
func (l *adoptingLock) holding(node string, st *zk.Stat, sid int64) *holding {
	h := nodeHolding(l.s, node, "", st)
	held, drop := sessionBound(l.s, sid)
	h.held = held
	release := h.release
	h.release = func(ctx context.Context) error {
		drop(recipes.ErrReleased)
		return release(ctx)
	}
	return h
}

// cleanup deletes, in the background, a node with guid left by an
// acquisition given up.
func (l *adoptingLock) cleanup(guid string) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), l.s.SessionTimeout())
		defer cancel()
		for ctx.Err() == nil {
			if usable(l.s.State()) {
				if p, err := l.find(guid); err == nil {
					if p != "" {
						_ = l.s.Conn().Delete(p, -1)
					}
					return
				}
			}
			cluster.Sleep(ctx, 50*time.Millisecond)
		}
	}()
}
