package workloads

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// holding is one acquisition made by a client of a holder workload (leader,
// rwlock, semaphore), as the client itself sees it.
type holding struct {
	mode  string                                                    // "", "read", "write"
	held  context.Context                                           // done the moment the holding may be lost
	fence recipes.Fence                                             // its token
	multi func(context.Context, ...any) ([]zk.MultiResponse, error) // fenced writes; nil: the holder does not write
	// release gives the holding up (Unlock, Release).
	release func(context.Context) error
}

// holderSpec describes a workload of clients that loop acquire, hold (a
// few fenced increments of a counter, or a pause), release.
type holderSpec struct {
	// path is the recipe's path, made persistent before the clients start;
	// once they quiesced, no ephemeral node may be left under it.
	path string
	// counter, when set, is made with value 0; holdings with a multi do
	// writes fenced increments of it.
	counter string
	writes  int
	// hold is the pause inside a holding before each write (or once, for a
	// holding that does not write).
	hold time.Duration
	pace time.Duration
	// acquirer returns client i's acquire function on its session. Each call
	// acquires once, or fails.
	acquirer func(s *recipes.Session, i int) (func(ctx context.Context) (*holding, error), error)
	// invokes records each acquisition's start as an invoke of
	// history.FnAcquire (ok with the token, or failed), for checkers that
	// need to know when an acquisition began (semaphore-max), and so that
	// an acquisition a fault slowed past its window is that window's
	// traffic (checkers.Exercised; rwlock).
	invokes bool
}

// runHolders runs env.Clients clients of spec until ctx is done; then,
// sessions still open, it records the ephemeral nodes left under the
// recipe's path, and closes every session.
func runHolders(ctx context.Context, env *cluster.Env, spec holderSpec) error {
	setup, err := setupHolders(ctx, env, spec)
	if err != nil {
		return err
	}
	defer setup.Close()
	return runHolderClients(ctx, env, setup, spec, env.Clients, func(i int) (*cluster.Client, error) {
		return env.NewClient(fmt.Sprintf("c%d", i+1))
	})
}

// setupHolders makes spec's path (and counter) and returns the setup
// connection, which the caller closes.
func setupHolders(ctx context.Context, env *cluster.Env, spec holderSpec) (*zk.Conn, error) {
	setup, err := env.ConnectSetup(ctx)
	if err != nil {
		return nil, err
	}
	acl := env.ACL()
	ops := []any{&zk.CreateRequest{Path: spec.path, Acl: acl}}
	if spec.counter != "" {
		ops = append(ops, &zk.CreateRequest{Path: spec.counter, Data: []byte("0"), Acl: acl})
	}
	if _, err := setup.Multi(ops...); err != nil {
		setup.Close()
		return nil, fmt.Errorf("chaos: setup of %s: %w", spec.path, err)
	}
	return setup, nil
}

// runHolderClients runs n clients of spec, client i made by newClient(i),
// until ctx is done; then, sessions still open, it records the ephemeral
// nodes left under the recipe's path through setup, and closes every
// session.
func runHolderClients(ctx context.Context, env *cluster.Env, setup *zk.Conn, spec holderSpec, n int, newClient func(i int) (*cluster.Client, error)) error {
	var (
		stopped sync.WaitGroup // clients done with the recipe
		closed  sync.WaitGroup // sessions closed
		release = make(chan struct{})
		mu      sync.Mutex
		errs    []error
	)
	for i := range n {
		c, err := newClient(i)
		if err != nil {
			stopped.Wait()
			close(release)
			closed.Wait()
			return err
		}
		stopped.Add(1)
		closed.Add(1)
		go func() {
			defer closed.Done()
			once := sync.OnceFunc(stopped.Done)
			defer once()
			quiesce := func() {
				once()
				<-release // keep the session open until the quiesced check is done
			}
			if err := holderClient(ctx, env, c, i, spec, quiesce); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	stopped.Wait()
	recordQuiesced(env, setup, spec.path)
	close(release)
	closed.Wait()
	return errors.Join(errs...)
}

// recordQuiesced records the ephemeral nodes left under p once every client
// stopped, waiting up to a session timeout for background deletes.
func recordQuiesced(env *cluster.Env, conn *zk.Conn, p string) {
	deadline := time.Now().Add(env.SessionTimeout)
	var left []string
	var err error
	for {
		left, err = cluster.Ephemerals(conn, p)
		if (err == nil && len(left) == 0) || time.Now().After(deadline) {
			break
		}
		<-time.After(50 * time.Millisecond)
	}
	e := history.Event{Client: history.Quiesced, Kind: history.KindNodesLeft, Value: int64(len(left)), Detail: strings.Join(left, ", ")}
	if err != nil {
		e.Value, e.Detail = -1, "cannot list: "+err.Error()
	}
	env.Rec.Add(e)
}

// connectRecipes opens a recipes.Session through c's link with the
// scenario's session timeout; c.Session follows it. A nil session with a
// nil error means ctx ended first. opts are added to the scenario's.
func connectRecipes(ctx context.Context, env *cluster.Env, c *cluster.Client, opts ...recipes.Option) (*recipes.Session, error) {
	s, err := recipes.Connect(ctx, c.Addrs(), append(env.SessionOptions(c), opts...)...)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, fmt.Errorf("chaos: %s: %w", c.Name, err)
	}
	c.SetConn(s.Conn())
	return s, nil
}

// closeRecipes closes s, waiting at most a session timeout.
func closeRecipes(s *recipes.Session, st time.Duration) {
	cctx, cancel := context.WithTimeout(context.Background(), st)
	defer cancel()
	_ = s.CloseContext(cctx)
}

func holderClient(ctx context.Context, env *cluster.Env, c *cluster.Client, i int, spec holderSpec, quiesce func()) error {
	s, err := connectRecipes(ctx, env, c)
	if s == nil {
		return err
	}
	defer closeRecipes(s, env.SessionTimeout)
	acquire, err := spec.acquirer(s, i)
	if err != nil {
		return err
	}
	log, st := c.Log, env.SessionTimeout
	writes, pace := spec.writes, spec.pace
	if writes == 0 {
		writes = 2
	}
	if pace == 0 {
		pace = 5 * time.Millisecond
	}
	for ctx.Err() == nil {
		var op *history.Op
		if spec.invokes {
			op = log.Invoke(history.FnAcquire, spec.path, 0)
		}
		h, err := acquire(ctx)
		if err != nil {
			if op != nil {
				op.Fail(err.Error())
			}
			if !cluster.Sleep(ctx, pace*10) {
				break
			}
			continue
		}
		if op != nil {
			op.OK(h.fence.Token)
		}
		token := h.fence.Token
		log.Acquired(spec.path, token, h.mode)
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			<-h.held.Done()
			if cause := context.Cause(h.held); !errors.Is(cause, recipes.ErrReleased) {
				log.Lost(spec.path, token, fmt.Sprint(cause))
			}
		}()
		if d := c.IdleHold(); d > 0 {
			holdFor(ctx, h.held, d) // idle inside the holding (a fault asked)
		}
		if h.multi != nil && spec.counter != "" {
			for range writes {
				if spec.hold > 0 {
					holdFor(ctx, h.held, spec.hold)
				}
				if h.held.Err() != nil || ctx.Err() != nil {
					break
				}
				fencedIncrement(ctx, s.Conn(), log, h.multi, spec.counter, token)
			}
		} else if spec.hold > 0 {
			holdFor(ctx, h.held, spec.hold)
		}
		if h.held.Err() == nil {
			log.Released(spec.path, token)
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), st)
		_ = h.release(rctx)
		cancel()
		<-watched
		cluster.Sleep(ctx, pace)
	}
	quiesce()
	return nil
}

// holdFor waits d, or until the holding or ctx ends.
func holdFor(ctx, held context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-held.Done():
	case <-t.C:
	}
}
