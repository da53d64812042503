package lock_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/seq"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestSemaphoreLimit: 10 contenders on a 3-lease semaphore never hold more
// than 3 leases at once, and all finish.
func TestSemaphoreLimit(t *testing.T) {
	e := ensemble(t)
	const contenders, leases, rounds = 10, 3, 5
	path := testPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var (
		holders, most atomic.Int64
		wg            sync.WaitGroup
		errs          = make(chan error, contenders)
	)
	for range contenders {
		s := connect(t, e.Addrs())
		sem := newSemaphore(t, s, path, leases)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				l, err := sem.Acquire(ctx)
				if err != nil {
					errs <- err
					return
				}
				n := holders.Add(1)
				for {
					m := most.Load()
					if n <= m || most.CompareAndSwap(m, n) {
						break
					}
				}
				if l.Context().Err() != nil {
					errs <- context.Cause(l.Context())
				}
				// Hold until all leases have been held at once (a
				// no-op after the first time), so that the limit is
				// reached and would be exceeded by a faulty semaphore.
				deadline := time.Now().Add(20 * time.Second)
				for most.Load() < leases && time.Now().Before(deadline) {
					if _, _, err := s.Conn().Exists(path); err != nil {
						errs <- err
						break
					}
				}
				holders.Add(-1)
				if err := l.Release(ctx); err != nil {
					errs <- err
					return
				}
				if err := l.Release(ctx); !errors.Is(err, lock.ErrNotHeld) {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("at most %d of %d leases held at once", most.Load(), leases)
	if most.Load() != leases {
		t.Fatalf("%d leases held at once, limit %d", most.Load(), leases)
	}
	admin := connect(t, e.Addrs())
	if left := rawChildren(t, admin, path+"/leases"); len(left) != 0 {
		t.Fatalf("leases left: %v", left)
	}
	if left := rawChildren(t, admin, path+"/locks"); len(left) != 0 {
		t.Fatalf("lock nodes left: %v", left)
	}
}

// TestSemaphoreCancel: an acquirer whose ctx ends while all leases are held
// leaves neither a lease nor a lock node.
func TestSemaphoreCancel(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	s1, s2 := connect(t, e.Addrs()), connect(t, e.Addrs())
	ctx := context.Background()
	l, err := newSemaphore(t, s1, path, 1).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	second := newSemaphore(t, s2, path, 1)
	go func() {
		_, err := second.Acquire(wctx)
		done <- err
	}()
	waitFor(t, 10*time.Second, "a second lease node", func() bool { return len(rawChildren(t, s1, path+"/leases")) == 2 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire = %v", err)
	}
	if n := len(rawChildren(t, s1, path+"/leases")); n != 1 {
		t.Fatalf("%d leases after cancel, want 1", n)
	}
	waitFor(t, 10*time.Second, "lock node removed", func() bool { return len(rawChildren(t, s1, path+"/locks")) == 0 })
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestRevocation: a holder with WithRevocation is asked to release through
// Revoke; it sees Revoked() and Context() (ErrRevoked), its fenced writes are
// rejected, and when it unlocks the waiter gets the lock.
func TestRevocation(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	target := path + "-data"
	a, b := connect(t, e.Addrs()), connect(t, e.Addrs())
	ensurePath(t, b, target, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	holder := newMutex(t, a, path, lock.WithRevocation(), lock.WithData([]byte("holder")))
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	waiter := newMutex(t, b, path, lock.WithData([]byte("waiter")))
	done := make(chan error, 1)
	go func() { done <- waiter.Lock(ctx) }()
	var ps []lock.Participant
	waitFor(t, 10*time.Second, "two participants", func() bool {
		var err error
		ps, err = waiter.Participants(ctx)
		return err == nil && len(ps) == 2
	})
	if string(ps[0].Data) != "holder" || ps[0].Node != holder.Node() || string(ps[1].Data) != "waiter" || ps[0].SessionID != a.ID() {
		t.Fatalf("participants = %+v", ps)
	}
	if err := lock.Revoke(ctx, b, ps[0].Node); err != nil {
		t.Fatal(err)
	}
	select {
	case <-holder.Revoked():
	case <-ctx.Done():
		t.Fatal("holder not told of the revocation")
	}
	<-holder.Context().Done()
	if cause := context.Cause(holder.Context()); !errors.Is(cause, recipes.ErrRevoked) {
		t.Fatalf("Context() cause = %v", cause)
	}
	if _, err := holder.FencedMulti(ctx, &zk.SetDataRequest{Path: target, Data: []byte("x"), Version: -1}); !errors.Is(err, recipes.ErrFenced) || !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("fenced write after revocation = %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("waiter acquired before the holder released: %v", err)
	default:
	}
	// Revoked before Unlock: Unlock says so, and still deletes the node.
	if err := holder.Unlock(ctx); !errors.Is(err, recipes.ErrReleased) || !errors.Is(err, recipes.ErrRevoked) {
		t.Fatalf("Unlock after the revocation = %v, want recipes.ErrReleased and recipes.ErrRevoked", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := lock.Revoke(ctx, b, ps[0].Node); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("Revoke of a released node = %v", err)
	}
	if err := waiter.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestMutexNodeDeleted: deleting the holder's node cancels Context() with
// ErrNodeDeleted and lets the next contender in.
func TestMutexNodeDeleted(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	a, b := connect(t, e.Addrs()), connect(t, e.Addrs())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m := newMutex(t, a, path)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	held := m.Context() // arms the node watch (or finds the node gone)
	if err := b.Conn().Delete(m.Node(), -1); err != nil {
		t.Fatal(err)
	}
	<-held.Done()
	if cause := context.Cause(held); !errors.Is(cause, recipes.ErrNodeDeleted) {
		t.Fatalf("cause = %v", cause)
	}
	if err := newMutex(t, b, path).TryLock(ctx); err != nil {
		t.Fatalf("TryLock after the holder's node was deleted = %v", err)
	}
	if err := m.Unlock(ctx); !errors.Is(err, recipes.ErrReleased) || !errors.Is(err, recipes.ErrNodeDeleted) {
		t.Fatalf("Unlock after the node was deleted = %v, want recipes.ErrReleased and recipes.ErrNodeDeleted", err)
	}
}

// TestKazooDialect: two kazoo-format mutexes exclude each other, and their
// node names follow kazoo's scheme.
func TestKazooDialect(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	a, b := connect(t, e.Addrs()), connect(t, e.Addrs())
	ctx := context.Background()
	ma, mb := newMutex(t, a, path, lock.WithDialect(recipes.Kazoo)), newMutex(t, b, path, lock.WithDialect(recipes.Kazoo))
	if err := ma.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	_, name := zkpath.Split(ma.Node())
	if c, ok := recipes.Kazoo.Parse(name, recipes.RoleLock); !ok || len(c.GUID) != 32 || name != c.GUID+"__lock__"+seq.Format(c.Seq) {
		t.Fatalf("kazoo node name %q", name)
	}
	if err := mb.TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("TryLock = %v", err)
	}
	// A Curator-format node under the same path is foreign to kazoo.
	mc := newMutex(t, b, path)
	if err := mc.TryLock(ctx); err != nil {
		t.Fatalf("Curator TryLock next to a kazoo holder = %v", err)
	}
	for _, m := range []*lock.Mutex{ma, mc} {
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
