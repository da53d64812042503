package workloads

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// MultiLock is the workload of lock.MultiMutex: clients hold two or three
// of three lock paths at once (client i all three when i is even,
// otherwise the two other than path i mod 3), each naming its paths in an
// order of its own (odd clients reversed), pause inside, and release. A
// holding is recorded for every path it covers, from Lock's return to the
// moment the joint Context is done (lost) or Unlock is called (released),
// with that path's fencing token. Each Lock call is also an acquire
// operation on the base path (ok with the first path's token, or failed).
//
// Checked by: mutual exclusion on every path (two clients never both
// believe they hold a path; tokens grow per path), liveness after every
// heal (the global order leaves no deadlock), and no nodes left once the
// clients quiesced and after every session closed.
type MultiLock struct {
	// Hold is the pause inside a holding. Default 20 ms.
	Hold time.Duration
}

// Name is "multilock".
func (w *MultiLock) Name() string { return "multilock" }

// Checkers: mutual-exclusion, liveness, no-nodes-left.
func (w *MultiLock) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.MutualExclusion(1), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// multiPaths makes <root>/multi/p0..p2 and returns them.
func multiPaths(ctx context.Context, env *cluster.Env) (base string, paths []string, setup *zk.Conn, err error) {
	setup, err = env.ConnectSetup(ctx)
	if err != nil {
		return "", nil, nil, err
	}
	base = env.Root + "/multi"
	acl := env.ACL()
	ops := []any{&zk.CreateRequest{Path: base, Acl: acl}}
	for i := range 3 {
		p := fmt.Sprintf("%s/p%d", base, i)
		paths = append(paths, p)
		ops = append(ops, &zk.CreateRequest{Path: p, Acl: acl})
	}
	if _, err := setup.Multi(ops...); err != nil {
		setup.Close()
		return "", nil, nil, fmt.Errorf("chaos: multilock setup: %w", err)
	}
	return base, paths, setup, nil
}

// Run runs env.Clients clients until ctx is done; then, sessions still
// open, it records the nodes left under the paths, and closes every
// session.
func (w *MultiLock) Run(ctx context.Context, env *cluster.Env) error {
	hold := w.Hold
	if hold == 0 {
		hold = 20 * time.Millisecond
	}
	base, paths, setup, err := multiPaths(ctx, env)
	if err != nil {
		return err
	}
	defer setup.Close()
	var cs []*cluster.Client
	for i := range env.Clients {
		c, err := env.NewClient(fmt.Sprintf("c%d", i+1))
		if err != nil {
			return err
		}
		cs = append(cs, c)
	}
	return runMulti(ctx, env, setup, base, cs, func(i int) (time.Duration, func(*recipes.Session) (multiAcquire, error)) {
		mine := slices.Clone(paths)
		if i%2 == 1 {
			mine = slices.Delete(mine, i%3, i%3+1)
			slices.Reverse(mine)
		}
		return hold, libraryMulti(mine)
	})
}

// runMulti runs a multiHolder per client (client(i) gives its hold and its
// acquirer) until ctx is done; then, sessions still open, it records the
// nodes left under base, and closes every session.
func runMulti(ctx context.Context, env *cluster.Env, setup *zk.Conn, base string, cs []*cluster.Client,
	client func(i int) (time.Duration, func(*recipes.Session) (multiAcquire, error))) error {
	var (
		stopped, closed sync.WaitGroup
		release         = make(chan struct{})
		mu              sync.Mutex
		errs            []error
	)
	for i, c := range cs {
		hold, acquirer := client(i)
		stopped.Add(1)
		closed.Add(1)
		go func() {
			defer closed.Done()
			once := sync.OnceFunc(stopped.Done)
			defer once()
			if err := multiHolder(ctx, env, c, base, hold, func() { once(); <-release }, acquirer); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	stopped.Wait()
	recordQuiesced(env, setup, base)
	close(release)
	closed.Wait()
	return errors.Join(errs...)
}

// libraryMulti is the acquirer of a lock.MultiMutex over paths.
func libraryMulti(paths []string) func(*recipes.Session) (multiAcquire, error) {
	return func(s *recipes.Session) (multiAcquire, error) {
		m, err := lock.NewMulti(s, paths)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (*multiHeld, error) {
			if err := m.Lock(ctx); err != nil {
				return nil, err
			}
			return &multiHeld{paths: m.Paths(), fences: m.Fences(), held: m.Context(), release: m.Unlock}, nil
		}, nil
	}
}

// multiHeld is one holding of several paths, as its client sees it.
type multiHeld struct {
	paths   []string
	fences  []recipes.Fence
	held    context.Context // done the moment the client must believe it holds none of them
	release func(context.Context) error
}

type multiAcquire func(ctx context.Context) (*multiHeld, error)

// multiHolder loops acquire, a pause of hold inside, release, recording a
// holding per path, until ctx is done; then it calls quiesce.
func multiHolder(ctx context.Context, env *cluster.Env, c *cluster.Client, base string, hold time.Duration, quiesce func(), acquirer func(*recipes.Session) (multiAcquire, error)) error {
	s, err := connectRecipes(ctx, env, c)
	if s == nil {
		return err
	}
	defer closeRecipes(s, env.SessionTimeout)
	acquire, err := acquirer(s)
	if err != nil {
		return err
	}
	for ctx.Err() == nil {
		// The attempt is an operation too: under a slow link one Lock can
		// outlast the fault's window, and its completion after the heal is
		// then the window's traffic (exercised counts it only because it
		// was invoked inside the window).
		op := c.Log.Invoke(history.FnAcquire, base, 0)
		h, err := acquire(ctx)
		if err != nil {
			op.Fail(err.Error())
			if !cluster.Sleep(ctx, 50*time.Millisecond) {
				break
			}
			continue
		}
		op.OK(h.fences[0].Token)
		for i, p := range h.paths {
			c.Log.Acquired(p, h.fences[i].Token, "")
		}
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			<-h.held.Done()
			if cause := context.Cause(h.held); !errors.Is(cause, recipes.ErrReleased) {
				for i, p := range h.paths {
					c.Log.Lost(p, h.fences[i].Token, fmt.Sprint(cause))
				}
			}
		}()
		holdFor(ctx, h.held, max(hold, c.IdleHold())) // idle longer when a fault asks
		if h.held.Err() == nil {
			for i, p := range h.paths {
				c.Log.Released(p, h.fences[i].Token)
			}
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), env.SessionTimeout)
		_ = h.release(rctx)
		cancel()
		<-watched
		cluster.Sleep(ctx, 5*time.Millisecond)
	}
	quiesce()
	return nil
}
