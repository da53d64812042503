package lock_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// until polls cond for up to d; it reports whether cond held. For hooks,
// which run off the test goroutine and so cannot fail the test themselves.
func until(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// faultAtBirth sets the core's before-hold hook to run fault once, for the
// first node under prefix that is about to become a holding, and returns a
// channel closed once fault has returned. The hook is removed at the end of
// the test.
func faultAtBirth(t *testing.T, prefix string, fault func() error) <-chan error {
	testutil.RequireHooks(t)
	t.Helper()
	var once sync.Once
	done := make(chan error, 1)
	t.Cleanup(hooks.SetBeforeHold(func(p string) {
		if strings.HasPrefix(p, prefix+"/") {
			once.Do(func() { done <- fault() })
		}
	}))
	return done
}

// cutUntilSuspended cuts link and waits until s reports the suspension.
func cutUntilSuspended(link *testenv.Link, s *recipes.Session) func() error {
	return func() error {
		if err := link.Cut(); err != nil {
			return err
		}
		if !until(20*time.Second, func() bool { return s.State() == recipes.StateSuspended }) {
			return context.DeadlineExceeded
		}
		return nil
	}
}

// expireUntilReplaced expires s's session and waits until s runs on a new
// one.
func expireUntilReplaced(ctx context.Context, link *testenv.Link, s *recipes.Session) func() error {
	return func() error {
		old := s.ID()
		if err := link.ExpireSession(ctx, old); err != nil {
			return err
		}
		if !until(30*time.Second, func() bool { return s.ID() != old && s.State() == recipes.StateConnected }) {
			return context.DeadlineExceeded
		}
		return nil
	}
}

// afterFault waits for the hook's fault, failing the test if it failed.
func afterFault(t *testing.T, fault <-chan error) {
	t.Helper()
	select {
	case err := <-fault:
		if err != nil {
			t.Fatalf("fault: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the acquisition never reached the hook")
	}
}

// alive fails the test unless an acquisition that returned nil left a
// holding whose context is not done, under the session's current id.
func alive(t *testing.T, what string, held context.Context, fence recipes.Fence, s *recipes.Session) {
	t.Helper()
	if err := held.Err(); err != nil {
		t.Fatalf("%s returned success with its holding already done: %v", what, context.Cause(held))
	}
	if fence.SessionID != s.ID() {
		t.Fatalf("%s holds a node of session 0x%x, the session is 0x%x", what, fence.SessionID, s.ID())
	}
}

// TestMutexSuspendedAtBirth: the connection is suspended between the
// listing that shows we hold and the holding. Lock must not return success
// with Context() already done; it waits for the connection, re-verifies the
// node and returns a live holding.
func TestMutexSuspendedAtBirth(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	link, err := e.NewLink("suspended-at-birth")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s := connect(t, link.Addrs())
	m := newMutex(t, s, path)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fault := faultAtBirth(t, path, cutUntilSuspended(link, s))
	done := make(chan error, 1)
	go func() { done <- m.Lock(ctx) }()
	afterFault(t, fault)
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Lock = %v", err)
	}
	alive(t, "Lock", m.Context(), m.Fence(), s)
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestMutexSessionReplacedAtBirth: the session expires (and go-zookeeper
// opens a new one) between the listing and the holding. Lock must not
// return the old session's node as a holding; it starts over under the new
// session.
func TestMutexSessionReplacedAtBirth(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	link, err := e.NewLink("replaced-at-birth")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s := connect(t, link.Addrs())
	m := newMutex(t, s, path)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fault := faultAtBirth(t, path, expireUntilReplaced(ctx, link, s))
	done := make(chan error, 1)
	go func() { done <- m.Lock(ctx) }()
	afterFault(t, fault)
	if err := <-done; err != nil {
		t.Fatalf("Lock = %v", err)
	}
	alive(t, "Lock", m.Context(), m.Fence(), s)
	if n := len(rawChildren(t, admin, path)); n != 1 {
		t.Fatalf("%d nodes under the lock, want our one", n)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestSemaphoreLeaseSuspendedAtBirth: the connection is suspended between
// creating the lease and its holding. Acquire must not return a lease whose
// Context() is done (nor one counted under a mutex that stepped down).
func TestSemaphoreLeaseSuspendedAtBirth(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	link, err := e.NewLink("lease-suspended-at-birth")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s := connect(t, link.Addrs())
	sem := newSemaphore(t, s, path, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fault := faultAtBirth(t, path+"/leases", cutUntilSuspended(link, s))
	done := make(chan *lock.Permit, 1)
	go func() {
		l, err := sem.Acquire(ctx)
		if err != nil {
			t.Errorf("Acquire = %v", err)
		}
		done <- l
	}()
	afterFault(t, fault)
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	l := <-done
	if l == nil {
		t.FailNow()
	}
	alive(t, "Acquire", l.Context(), l.Fence(), s)
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestSemaphoreSuspendedWhileListing guards Semaphore.Acquire's promise
// "Acquire never returns a lease whose Context() is already done. If the
// mutex or the lease may be lost before the lease counts (the connection is
// suspended under the default loss policy [...]), both are given up and
// Acquire starts over" at the last step before a grant: the connection is
// suspended while the acquirer's listing of the leases, which shows room,
// is in flight (its reply held back by the link's latency), and comes back
// within the session. The listing is answered after the reconnection; the
// mutex and the lease stepped down meanwhile, so that answer must not grant.
func TestSemaphoreSuspendedWhileListing(t *testing.T) {
	testutil.RequireHooks(t)
	e := ensemble(t)
	path := testPath(t)
	link, err := e.NewLink("semaphore-suspended-listing")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s, counter := countedSession(t, link.Addrs())
	sem := newSemaphore(t, s, path, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// At the lease's birth (the mutex is held), hold replies back, then cut
	// once the next listing has been sent, wait for the suspension, and
	// restore the link.
	var once sync.Once
	fault := make(chan error, 1)
	t.Cleanup(hooks.SetBeforeHold(func(p string) {
		if !strings.HasPrefix(p, path+"/leases/") {
			return
		}
		once.Do(func() {
			before := counter.Snapshot()
			if err := link.Latency(time.Second, 0); err != nil {
				fault <- err
				return
			}
			go func() {
				if !until(20*time.Second, func() bool { return counter.Snapshot().Sub(before).Req(zkcount.OpGetChildren2) >= 1 }) {
					fault <- errors.New("no listing sent after the lease's birth")
					return
				}
				err := cutUntilSuspended(link, s)()
				err = errors.Join(err, link.Heal(), link.Restore())
				fault <- err
			}()
		})
	}))
	got := make(chan *lock.Permit, 1)
	go func() {
		l, err := sem.Acquire(ctx)
		if err != nil {
			t.Errorf("Acquire = %v", err)
		}
		got <- l
	}()
	afterFault(t, fault)
	l := <-got
	if l == nil {
		t.FailNow()
	}
	alive(t, "Acquire", l.Context(), l.Fence(), s)
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestSemaphoreWaitEndsWithItsHoldings: an acquirer waiting for a lease
// (holding the mutex) is suspended; its mutex and lease step down. The wait
// must end with them and start over, rather than count a lease whose
// holding is done once the other lease is released.
func TestSemaphoreWaitEndsWithItsHoldings(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	link, err := e.NewLink("semaphore-wait-suspended")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	other, err := newSemaphore(t, connect(t, e.Addrs()), path, 1).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := connect(t, link.Addrs())
	sem := newSemaphore(t, s, path, 1)
	done := make(chan *lock.Permit, 1)
	go func() {
		l, err := sem.Acquire(ctx)
		if err != nil {
			t.Errorf("Acquire = %v", err)
		}
		done <- l
	}()
	waitFor(t, 20*time.Second, "the second lease queued", func() bool { return len(rawChildren(t, admin, path+"/leases")) == 2 })
	if err := cutUntilSuspended(link, s)(); err != nil {
		t.Fatal(err)
	}
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "reconnected", func() bool { return s.State() == recipes.StateReconnected || s.State() == recipes.StateConnected })
	if err := other.Release(ctx); err != nil {
		t.Fatal(err)
	}
	l := <-done
	if l == nil {
		t.FailNow()
	}
	alive(t, "Acquire", l.Context(), l.Fence(), s)
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestSemaphoreSessionReplacedAtLeaseBirth: the session is replaced between
// taking the mutex and the lease's holding. The lease must not count under
// a mutex of another session: Acquire starts over and returns a live lease
// of the new session, leaving no other node behind.
func TestSemaphoreSessionReplacedAtLeaseBirth(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	link, err := e.NewLink("lease-replaced-at-birth")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s := connect(t, link.Addrs())
	sem := newSemaphore(t, s, path, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fault := faultAtBirth(t, path+"/leases", expireUntilReplaced(ctx, link, s))
	done := make(chan *lock.Permit, 1)
	go func() {
		l, err := sem.Acquire(ctx)
		if err != nil {
			t.Errorf("Acquire = %v", err)
		}
		done <- l
	}()
	afterFault(t, fault)
	l := <-done
	if l == nil {
		t.FailNow()
	}
	alive(t, "Acquire", l.Context(), l.Fence(), s)
	if n := len(rawChildren(t, admin, path+"/leases")); n != 1 {
		t.Fatalf("%d leases, want our one", n)
	}
	waitFor(t, 20*time.Second, "the mutex released", func() bool { return len(rawChildren(t, admin, path+"/locks")) == 0 })
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
