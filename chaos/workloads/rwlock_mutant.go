package workloads

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/rwlock"
)

// RWLockStale is the rwlock-stale mutant and its twin. The target (c1) is a
// foreign client that emulates Curator 5.5's downgrade with raw creates: it
// takes the write lock (rwlock.RWMutex), holds it 100 ms, creates a plain
// ephemeral "_c_<uuid36>-__READ__<its write node's 10-digit sequence>"
// node, deletes its write node (Unlock), reads for 300 ms and deletes its
// read node. The read node takes the write node's place in the queue,
// ahead of every writer queued behind it. The other clients are writers:
// rwlock.RWMutex in the twin, which lists again before it concludes that it
// holds (see recipes' trustsKnownList) and waits for the read node.
//
// With Mutant set, the writers are a copy of the contender core's writer
// wait with that step removed: when the only node ahead of it in the list
// it has (minus the nodes it saw go) is deleted, it holds without listing
// again, while the downgraded
// read node sits ahead of it. writer-exclusive catches the overlap. The
// foreign client exposes the mutant, not a network fault: the scenario's
// fault (latency-low) only slows the downgrader.
type RWLockStale struct {
	Mutant bool
}

// Name is "rwlock-stale-mutant", or "rwlock-stale" for the twin.
func (w *RWLockStale) Name() string { return mutantName("rwlock-stale", w.Mutant) }

// Checkers: writer-exclusive, fencing, liveness, no-nodes-left.
func (w *RWLockStale) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.WriterExclusive(), checkers.FencedWrites(), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// writeLocker is what a writer of the workload needs: rwlock.RWMutex's
// write side, or the mutant writer.
type writeLocker interface {
	Lock(ctx context.Context) error
	Unlock(ctx context.Context) error
	Context() context.Context
	Fence() recipes.Fence
	FencedMulti(ctx context.Context, ops ...any) ([]zk.MultiResponse, error)
}

// Run makes <root>/rwlock and <root>/counter = 0 and runs the downgrader
// and the writers until ctx is done.
func (w *RWLockStale) Run(ctx context.Context, env *cluster.Env) error {
	setup, err := env.ConnectSetup(ctx)
	if err != nil {
		return err
	}
	defer setup.Close()
	lockPath, counter := env.Root+"/rwlock", env.Root+"/counter"
	acl := env.ACL()
	if _, err := setup.Multi(&zk.CreateRequest{Path: lockPath, Acl: acl}, &zk.CreateRequest{Path: counter, Data: []byte("0"), Acl: acl}); err != nil {
		return fmt.Errorf("chaos: rwlock setup: %w", err)
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
			quiesce := func() { once(); <-release }
			var err error
			if i == 0 {
				err = w.downgrader(ctx, env, c, lockPath, quiesce)
			} else {
				err = w.writer(ctx, env, c, lockPath, counter, quiesce)
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	stopped.Wait()
	recordQuiesced(env, setup, lockPath)
	close(release)
	closed.Wait()
	return errors.Join(errs...)
}

// downgrader loops: write lock, 100 ms, Curator 5.5's downgrade by hand,
// 300 ms of reading, delete of the read node.
func (w *RWLockStale) downgrader(ctx context.Context, env *cluster.Env, c *cluster.Client, lockPath string, quiesce func()) error {
	st := env.SessionTimeout
	s, err := connectRecipes(ctx, env, c)
	if s == nil {
		return err
	}
	defer closeRecipes(s, st)
	m, err := rwlock.New(s, lockPath)
	if err != nil {
		return fmt.Errorf("chaos: %s: %w", c.Log.Name(), err)
	}
	for ctx.Err() == nil {
		if err := m.Lock(ctx); err != nil {
			cluster.Sleep(ctx, 50*time.Millisecond)
			continue
		}
		wtoken, node := m.Fence().Token, m.Node()
		c.Log.Acquired(lockPath, wtoken, "write")
		watched := watchHolding(c.Log, lockPath, wtoken, m.Context())
		holdFor(ctx, m.Context(), 100*time.Millisecond)
		read := ""
		if m.Context().Err() == nil {
			// Curator 5.5: a plain ephemeral read node with our write
			// node's sequence, then the write node goes.
			seq := node[len(node)-10:]
			p, err := s.Conn().Create(lockPath+"/_c_"+uuid.NewString()+"-__READ__"+seq, nil, zk.FlagEphemeral, s.ACLFor(lockPath))
			if err == nil && m.Context().Err() == nil {
				read = p
				c.Log.Released(lockPath, wtoken)
				c.Log.Acquired(lockPath, 0, "read") // token 0: its czxid postdates writers queued behind it
			}
		}
		if read == "" && m.Context().Err() == nil {
			c.Log.Released(lockPath, wtoken)
		}
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), st)
		_ = m.Unlock(uctx)
		cancel()
		<-watched
		if read != "" {
			cluster.Sleep(ctx, 300*time.Millisecond)
			c.Log.Released(lockPath, 0)
			_ = s.Conn().Delete(read, -1) // our own, uniquely named node
		}
		cluster.Sleep(ctx, 20*time.Millisecond)
	}
	quiesce()
	return nil
}

// writer loops: write lock, two fenced increments 10 ms apart, unlock.
func (w *RWLockStale) writer(ctx context.Context, env *cluster.Env, c *cluster.Client, lockPath, counter string, quiesce func()) error {
	st := env.SessionTimeout
	s, err := connectRecipes(ctx, env, c)
	if s == nil {
		return err
	}
	defer closeRecipes(s, st)
	rw, err := rwlock.New(s, lockPath)
	if err != nil {
		return fmt.Errorf("chaos: %s: %w", c.Log.Name(), err)
	}
	var m writeLocker = rw
	if w.Mutant {
		m = &staleWriter{s: s, path: lockPath}
	}
	for ctx.Err() == nil {
		if err := m.Lock(ctx); err != nil {
			cluster.Sleep(ctx, 50*time.Millisecond)
			continue
		}
		token := m.Fence().Token
		c.Log.Acquired(lockPath, token, "write")
		held := m.Context()
		watched := watchHolding(c.Log, lockPath, token, held)
		for range 2 {
			holdFor(ctx, held, 10*time.Millisecond)
			if held.Err() != nil || ctx.Err() != nil {
				break
			}
			fencedIncrement(ctx, s.Conn(), c.Log, m.FencedMulti, counter, token)
		}
		if held.Err() == nil {
			c.Log.Released(lockPath, token)
		}
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), st)
		_ = m.Unlock(uctx)
		cancel()
		<-watched
		cluster.Sleep(ctx, 5*time.Millisecond)
	}
	quiesce()
	return nil
}

// staleWriter is the mutant writer: the contender core's writer wait in
// Curator's dialect (every node ahead blocks a writer; order by the
// 10-digit suffix), except that when the node it watches was the only one
// ahead in what it knows (its one list, minus the nodes it has since seen
// gone), its deletion makes it hold without listing again.
// It ignores its session's loss (no fault of its scenarios ends a session).
type staleWriter struct {
	s     *recipes.Session
	path  string
	node  string
	fence recipes.Fence
	held  context.Context
	drop  context.CancelCauseFunc
}

func (w *staleWriter) Lock(ctx context.Context) error {
	conn := w.s.Conn()
	p, err := conn.Create(w.path+"/_c_"+uuid.NewString()+"-__WRIT__", nil, zk.FlagEphemeral|zk.FlagSequence, w.s.ACLFor(w.path))
	if err != nil {
		return fmt.Errorf("chaos: stale writer: %w", err)
	}
	fail := func(err error) error {
		_ = conn.Delete(p, -1)
		return fmt.Errorf("chaos: stale writer: %w", err)
	}
	self := path.Base(p)
	known, _, err := conn.Children(w.path)
	if err != nil {
		return fail(err)
	}
	sort.Slice(known, func(i, j int) bool {
		a, b := seqSuffix(known[i]), seqSuffix(known[j])
		return a < b || a == b && known[i] < known[j]
	})
	for {
		i := sortIndex(known, self)
		if i < 0 {
			return fail(errors.New("own node gone"))
		}
		if i == 0 {
			break
		}
		// Watch the node right ahead; once it is gone, drop it from the
		// known list and look again. The mutant never lists again: the
		// list it has says who is ahead.
		_, _, ch, err := conn.GetW(w.path + "/" + known[i-1])
		switch {
		case errors.Is(err, zk.ErrNoNode):
		case err != nil:
			return fail(err)
		default:
			select {
			case <-ctx.Done():
				return fail(ctx.Err())
			case <-ch:
			}
		}
		known = append(known[:i-1:i-1], known[i:]...)
	}
	_, st, err := conn.Get(p)
	if err != nil {
		return fail(err)
	}
	w.node = p
	w.fence = recipes.Fence{Token: st.Czxid, Path: p, SessionID: st.EphemeralOwner, Version: st.Version}
	w.held, w.drop = context.WithCancelCause(context.Background())
	return nil
}

func (w *staleWriter) Unlock(context.Context) error {
	if w.node == "" {
		return errors.New("chaos: stale writer not held")
	}
	w.drop(recipes.ErrReleased)
	err := w.s.Conn().Delete(w.node, -1)
	w.node = ""
	return err
}

func (w *staleWriter) Context() context.Context { return w.held }

func (w *staleWriter) Fence() recipes.Fence { return w.fence }

func (w *staleWriter) FencedMulti(ctx context.Context, ops ...any) ([]zk.MultiResponse, error) {
	return recipes.FencedMulti(ctx, w.s, w.fence, ops...)
}

// seqSuffix returns the last 10 characters of a contender's name (its
// sequence, or the sequence a Curator 5.5 downgrade node copies).
func seqSuffix(name string) string {
	if len(name) < 10 {
		return name
	}
	return name[len(name)-10:]
}

func sortIndex(kids []string, self string) int {
	for i, k := range kids {
		if k == self {
			return i
		}
	}
	return -1
}
