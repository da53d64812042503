package workloads

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Lock is the workload of lock.Mutex: every client, with its own
// recipes.Session on its own link, loops Lock, a few fenced increments of a
// counter (sync, read, then FencedMulti with the counter's version), and
// Unlock. It records each holding from Lock's return to the moment Context()
// is done (lost) or Unlock is called (released), every fenced write with
// the holding's token, and each increment as a compare-and-set.
//
// Checked by: mutual exclusion with growing tokens, fencing order (no
// stale write accepted, no update lost), linearizability of the
// increments, liveness after every heal, and no nodes left, both once the
// clients quiesced (every Lock cancelled or released, sessions still open)
// and after every session closed.
//
// With Broken set, clients use a lock that ignores its predecessor: it
// creates its sequential node and holds at once. Mutual exclusion must then
// fail (fencing still holds: each write checks its own node and the
// counter's version).
type Lock struct {
	Broken bool
	// Writes is the number of fenced increments per holding. Default 2.
	Writes int
	// Pace is the pause after a release. Default 5 ms.
	Pace time.Duration
	// Hold is a pause inside the critical section, before each write.
	Hold time.Duration
}

// Name is "lock" or "lock-broken".
func (w *Lock) Name() string {
	if w.Broken {
		return "lock-broken"
	}
	return "lock"
}

// Checkers: mutual-exclusion, fencing, linearizable, liveness, no-nodes-left.
func (w *Lock) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.MutualExclusion(1), checkers.FencedWrites(), checkers.Linearizable(cfg.CheckTimeout), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// locker is what a client needs of a lock: lock.Mutex, or the broken one.
type locker interface {
	Lock(ctx context.Context) error
	Unlock(ctx context.Context) error
	Context() context.Context
	Fence() recipes.Fence
	FencedMulti(ctx context.Context, ops ...any) ([]zk.MultiResponse, error)
}

// Run makes <root>/lock and <root>/counter = 0 and runs env.Clients
// clients until ctx is done; then, sessions still open, it checks that no
// contender node is left under the lock, and closes every session.
func (w *Lock) Run(ctx context.Context, env *cluster.Env) error {
	setup, err := env.ConnectSetup(ctx)
	if err != nil {
		return err
	}
	defer setup.Close()
	lockPath, counter := env.Root+"/lock", env.Root+"/counter"
	acl := env.ACL()
	if _, err := setup.Multi(&zk.CreateRequest{Path: lockPath, Acl: acl}, &zk.CreateRequest{Path: counter, Data: []byte("0"), Acl: acl}); err != nil {
		return fmt.Errorf("chaos: lock setup: %w", err)
	}
	var (
		stopped sync.WaitGroup // clients done with the lock
		closed  sync.WaitGroup // sessions closed
		release = make(chan struct{})
		mu      sync.Mutex
		errs    []error
	)
	for i := range env.Clients {
		c, err := env.NewClient(fmt.Sprintf("c%d", i+1))
		if err != nil {
			return err
		}
		stopped.Add(1)
		closed.Add(1)
		go func() {
			defer closed.Done()
			err := w.client(ctx, env, c, lockPath, counter, &stopped, release)
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	stopped.Wait()
	w.quiesced(env, setup, lockPath)
	close(release)
	closed.Wait()
	return errors.Join(errs...)
}

// quiesced records the contender nodes still under the lock once every
// client stopped, waiting up to a session timeout for background deletes.
func (w *Lock) quiesced(env *cluster.Env, conn *zk.Conn, lockPath string) {
	deadline := time.Now().Add(env.SessionTimeout)
	var kids []string
	var err error
	for {
		kids, _, err = conn.Children(lockPath)
		if (err == nil && len(kids) == 0) || time.Now().After(deadline) {
			break
		}
		<-time.After(50 * time.Millisecond)
	}
	e := history.Event{Client: history.Quiesced, Kind: history.KindNodesLeft, Value: int64(len(kids)), Detail: strings.Join(kids, ", ")}
	if err != nil {
		e.Value, e.Detail = -1, "cannot list: "+err.Error()
	}
	env.Rec.Add(e)
}

func (w *Lock) client(ctx context.Context, env *cluster.Env, c *cluster.Client, lockPath, counter string, stopped *sync.WaitGroup, release <-chan struct{}) error {
	once := sync.OnceFunc(stopped.Done)
	defer func() {
		once()
		<-release
	}()
	return w.loop(ctx, c.Addrs(), env.SessionTimeout, c.Log, lockPath, counter, c.Dial, env.Security.RecipeOptions(), c.SetConn, c.IdleHold, func() {
		once()
		<-release // keep the session open until the quiesced check is done
	})
}

// loop connects a recipes.Session to addrs (through dial, when not nil,
// with the security options secure) and runs Lock, fenced increments and Unlock until ctx is done (pausing
// idle for idle(), when not nil, at the start of each holding); then it
// calls quiesce (if not nil) and closes the session. Used in-process and by
// worker processes.
func (w *Lock) loop(ctx context.Context, addrs []string, st time.Duration, log *history.ClientLog, lockPath, counter string,
	dial func(network, address string, timeout time.Duration) (net.Conn, error), secure []recipes.Option, onConn func(*zk.Conn),
	idle func() time.Duration, quiesce func()) error {
	opts := []recipes.Option{recipes.WithSessionTimeout(st), recipes.WithLogger(slog.New(slog.DiscardHandler))}
	if dial != nil {
		opts = append(opts, recipes.WithDialer(dial))
	}
	opts = append(opts, secure...)
	s, err := recipes.Connect(ctx, addrs, opts...)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("chaos: %s: %w", log.Name(), err)
	}
	onConn(s.Conn())
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), st)
		defer cancel()
		_ = s.CloseContext(cctx)
	}()
	mu, err := lock.New(s, lockPath)
	if err != nil {
		return fmt.Errorf("chaos: %s: %w", log.Name(), err)
	}
	var m locker = mu
	if w.Broken {
		m = &brokenLock{s: s, path: lockPath}
	}
	writes, pace := w.Writes, w.Pace
	if writes == 0 {
		writes = 2
	}
	if pace == 0 {
		pace = 5 * time.Millisecond
	}
	for ctx.Err() == nil {
		// The attempt is an operation too: under a slow link a handoff
		// (the watch event, then the listing) can outlast the fault's
		// window, and its completion after the heal is then the window's
		// traffic (checkers.Exercised counts it because it was invoked in
		// the window).
		op := log.Invoke(history.FnAcquire, lockPath, 0)
		if err := m.Lock(ctx); err != nil {
			op.Fail(err.Error())
			if !cluster.Sleep(ctx, pace*10) {
				break
			}
			continue
		}
		fence := m.Fence()
		op.OK(fence.Token)
		log.Acquired(lockPath, fence.Token, "")
		held := m.Context()
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			<-held.Done()
			if cause := context.Cause(held); !errors.Is(cause, recipes.ErrReleased) {
				log.Lost(lockPath, fence.Token, fmt.Sprint(cause))
			}
		}()
		if idle != nil {
			if d := idle(); d > 0 {
				holdFor(ctx, held, d) // idle inside the holding (a fault asked)
			}
		}
		for range writes {
			if w.Hold > 0 {
				cluster.Sleep(ctx, w.Hold)
			}
			if held.Err() != nil || ctx.Err() != nil {
				break
			}
			fencedIncrement(ctx, s.Conn(), log, m.FencedMulti, counter, fence.Token)
		}
		if held.Err() == nil {
			log.Released(lockPath, fence.Token)
		}
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), st)
		_ = m.Unlock(uctx)
		cancel()
		<-watched
		cluster.Sleep(ctx, pace)
	}
	if quiesce != nil {
		quiesce()
	}
	return nil
}

// fencedIncrement reads the counter after a sync (a follower may lag) and
// writes the next value in a fenced multi guarded by the counter's version.
func fencedIncrement(ctx context.Context, conn *zk.Conn, log *history.ClientLog, fencedMulti func(context.Context, ...any) ([]zk.MultiResponse, error), counter string, token int64) {
	if _, err := conn.Sync(counter); err != nil {
		return
	}
	data, st, err := conn.Get(counter)
	if err != nil {
		return
	}
	v, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil {
		return
	}
	op := log.InvokeValue(history.FnFencedCAS, counter, v, v+1)
	_, err = fencedMulti(ctx, &zk.SetDataRequest{Path: counter, Data: []byte(strconv.FormatInt(v+1, 10)), Version: st.Version})
	switch {
	case err == nil:
		op.OK(v + 1)
		log.Fenced(counter, token, v+1, true, "")
	case errors.Is(err, recipes.ErrFenced):
		op.Fail(err.Error())
		log.Fenced(counter, token, v+1, false, err.Error())
	case errors.Is(err, zk.ErrBadVersion):
		op.Fail(err.Error()) // the counter moved under us: the checkers will see who wrote
	default:
		op.Unknown(err.Error())
	}
}
