package lock_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

func newMulti(t *testing.T, s *recipes.Session, paths []string, opts ...lock.Option) *lock.MultiMutex {
	t.Helper()
	m, err := lock.NewMulti(s, paths, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestMultiAllOrNothing: paths are taken in sorted order; TryLock with one
// path busy holds nothing afterwards; Lock waits for the busy path and then
// holds every path; Unlock frees them all.
func TestMultiAllOrNothing(t *testing.T) {
	e := ensemble(t)
	ctx := testutil.Ctx(t, time.Minute)
	path := testPath(t)
	a, b, c := path+"/a", path+"/b", path+"/c"
	s := connect(t, e.Addrs())
	other := connect(t, e.Addrs())
	m := newMulti(t, s, []string{c, a, b, a})
	if got := m.Paths(); !slices.Equal(got, []string{a, b, c}) {
		t.Fatalf("Paths = %v", got)
	}
	busy := newMutex(t, other, b)
	if err := busy.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("TryLock with %s busy = %v, want ErrLocked", b, err)
	}
	if n := len(rawChildren(t, other, a)); n != 0 {
		t.Fatalf("%d nodes left under %s after a failed TryLock", n, a)
	}
	if m.Context().Err() == nil || m.Fences() != nil {
		t.Fatal("a failed TryLock left a holding")
	}
	done := make(chan error, 1)
	go func() { done <- m.Lock(ctx) }()
	waitFor(t, 10*time.Second, "the multi-lock to queue on the busy path", func() bool { return len(rawChildren(t, other, b)) == 2 })
	if n := len(rawChildren(t, other, c)); n != 0 {
		t.Fatalf("the multi-lock took %s before %s", c, b)
	}
	if err := busy.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	fences := m.Fences()
	if len(fences) != 3 || m.Context().Err() != nil {
		t.Fatalf("after Lock: %d fences, context %v", len(fences), m.Context().Err())
	}
	for i, p := range []string{a, b, c} {
		if fences[i].SessionID != s.ID() || len(rawChildren(t, other, p)) != 1 {
			t.Fatalf("path %s not held by us: %+v", p, fences[i])
		}
	}
	hctx := m.Context()
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(context.Cause(hctx), recipes.ErrReleased) {
		t.Fatalf("cause after Unlock = %v", context.Cause(hctx))
	}
	for _, p := range []string{a, b, c} {
		if n := len(rawChildren(t, other, p)); n != 0 {
			t.Fatalf("%d nodes left under %s after Unlock", n, p)
		}
	}
	if err := m.Unlock(ctx); !errors.Is(err, lock.ErrNotHeld) || !errors.Is(err, recipes.ErrReleased) {
		t.Fatalf("second Unlock = %v, want ErrNotHeld and recipes.ErrReleased", err)
	}
}

// TestMultiLockCtxEnds: ctx ends while Lock waits for its second path; the
// first is released and nothing is held.
func TestMultiLockCtxEnds(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	a, b := path+"/a", path+"/b"
	s := connect(t, e.Addrs())
	other := connect(t, e.Addrs())
	busy := newMutex(t, other, b)
	if err := busy.Lock(testutil.Ctx(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	m := newMulti(t, s, []string{a, b})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Lock(ctx) }()
	waitFor(t, 10*time.Second, "the multi-lock to hold a and wait for b", func() bool {
		return len(rawChildren(t, other, a)) == 1 && len(rawChildren(t, other, b)) == 2
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock = %v, want context.Canceled", err)
	}
	waitFor(t, 10*time.Second, "every node of the multi-lock deleted", func() bool {
		return len(rawChildren(t, other, a)) == 0 && len(rawChildren(t, other, b)) == 1
	})
}

// TestMultiNoDeadlock: two multi-locks given the same paths in opposite
// orders, on two sessions, lock and unlock in a loop without deadlock, and
// never hold at the same time.
func TestMultiNoDeadlock(t *testing.T) {
	e := ensemble(t)
	ctx := testutil.Ctx(t, 2*time.Minute)
	path := testPath(t)
	x, y := path+"/x", path+"/y"
	var inside, overlaps atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, order := range [][]string{{x, y}, {y, x}} {
		m := newMulti(t, connect(t, e.Addrs()), order)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if err := m.Lock(ctx); err != nil {
					errs <- err
					return
				}
				if inside.Add(1) > 1 {
					overlaps.Add(1)
				}
				inside.Add(-1)
				if err := m.Unlock(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := overlaps.Load(); n != 0 {
		t.Fatalf("the two multi-locks held at once %d times", n)
	}
}

// TestMultiJointFence: FencedMulti commits while every path is held; once
// any one holding's node is gone, ZooKeeper rejects it (recipes.ErrFenced)
// and Context is done with that holding's cause.
func TestMultiJointFence(t *testing.T) {
	e := ensemble(t)
	ctx := testutil.Ctx(t, time.Minute)
	path := testPath(t)
	s := connect(t, e.Addrs())
	admin := connect(t, e.Addrs())
	m := newMulti(t, s, []string{path + "/p", path + "/q", path + "/r"})
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer m.Unlock(ctx)
	acl := testutil.ACL()
	if _, err := m.FencedMulti(ctx, &zk.CreateRequest{Path: path + "/out1", Acl: acl}); err != nil {
		t.Fatalf("fenced write while held: %v", err)
	}
	// Lose the middle holding only.
	if err := admin.Conn().Delete(m.Fences()[1].Path, -1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the multi-lock's context to end", func() bool { return m.Context().Err() != nil })
	if !errors.Is(context.Cause(m.Context()), recipes.ErrNodeDeleted) {
		t.Fatalf("cause = %v, want recipes.ErrNodeDeleted", context.Cause(m.Context()))
	}
	_, err := m.FencedMulti(ctx, &zk.CreateRequest{Path: path + "/out2", Acl: acl})
	if !errors.Is(err, recipes.ErrFenced) {
		t.Fatalf("fenced write after losing one path = %v, want recipes.ErrFenced", err)
	}
	if ok, _, _ := admin.Conn().Exists(path + "/out2"); ok {
		t.Fatal("the fenced write committed")
	}
}

// TestMultiBadInput: NewMulti validates every path and sends nothing.
func TestMultiBadInput(t *testing.T) {
	e := ensemble(t)
	s := connect(t, e.Addrs())
	for _, tc := range []struct {
		paths []string
		want  error
	}{
		{nil, recipes.ErrBadArgument},
		{[]string{"/ok", "bad"}, recipes.ErrInvalidPath},
		{[]string{"/zookeeper/x"}, recipes.ErrInvalidPath},
	} {
		if _, err := lock.NewMulti(s, tc.paths); !errors.Is(err, tc.want) {
			t.Errorf("NewMulti(%q) = %v, want %v", tc.paths, err, tc.want)
		}
	}
	if _, err := lock.NewMulti(nil, []string{"/a"}); !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("NewMulti(nil session) = %v", err)
	}
}

// TestMultiLockSuspendedWhileWaiting: Lock holds a and waits for b; the
// connection is suspended (the holding of a steps down, default policy)
// and comes back under the same session; then b is released to us. Lock
// must not return a holding already lost: it fails with ErrSuspended and
// holds nothing. (It used to return nil, its Context cancelled only some
// time later, from a goroutine.)
func TestMultiLockSuspendedWhileWaiting(t *testing.T) {
	e := ensemble(t)
	ctx := testutil.Ctx(t, 2*time.Minute)
	path := testPath(t)
	a, b := path+"/a", path+"/b"
	link, err := e.NewLink("multi-suspended")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s := connect(t, link.Addrs())
	other := connect(t, e.Addrs())
	busy := newMutex(t, other, b)
	if err := busy.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	m := newMulti(t, s, []string{a, b})
	done := make(chan error, 1)
	go func() { done <- m.Lock(ctx) }()
	waitFor(t, 10*time.Second, "the multi-lock to hold a and wait for b", func() bool {
		return len(rawChildren(t, other, a)) == 1 && len(rawChildren(t, other, b)) == 2
	})
	sid := s.ID()
	if err := cutUntilSuspended(link, s)(); err != nil {
		t.Fatal(err)
	}
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the same session back", func() bool {
		return s.State() == recipes.StateReconnected && s.ID() == sid
	})
	if err := busy.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	var lockErr error
	select {
	case lockErr = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Lock did not return once b was free")
	}
	if lockErr == nil {
		held := m.Context()
		t.Fatalf("Lock = nil with a holding lost while waiting (joint Context done: %v, cause %v)", held.Err() != nil, context.Cause(held))
	}
	if !errors.Is(lockErr, recipes.ErrSuspended) {
		t.Fatalf("Lock = %v, want ErrSuspended", lockErr)
	}
	if m.Fences() != nil || !errors.Is(context.Cause(m.Context()), lock.ErrNotHeld) {
		t.Fatal("a failed Lock left a holding")
	}
	waitFor(t, 10*time.Second, "every node of the multi-lock deleted", func() bool {
		return len(rawChildren(t, other, a)) == 0 && len(rawChildren(t, other, b)) == 0
	})
	// Nothing stuck: the multi-lock takes both paths now.
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Context().Err(); err != nil {
		t.Fatalf("joint Context done after Lock: %v", context.Cause(m.Context()))
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestMultiUnlockEndsContextBeforeDelete guards MultiMutex.Unlock's promise
// "Context is cancelled (recipes.ErrReleased) before any node is deleted":
// a Mutex waiting on the path the multi-lock took last (the first one Unlock
// deletes) must find the multi-lock's joint Context already done when it
// acquires. The holder's link adds latency, so that the deletes of the other
// paths take long enough for a Context ended after them to be seen live.
func TestMultiUnlockEndsContextBeforeDelete(t *testing.T) {
	e := ensemble(t)
	ctx := testutil.Ctx(t, time.Minute)
	path := testPath(t)
	a, b, c := path+"/a", path+"/b", path+"/c"
	link, err := e.NewLink("multi-unlock-order")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s := connect(t, link.Addrs())
	other := connect(t, e.Addrs())
	m := newMulti(t, s, []string{a, b, c})
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	hctx := m.Context()
	waiter := newMutex(t, other, c)
	acquired := make(chan error, 1)
	go func() { acquired <- waiter.Lock(ctx) }()
	waitFor(t, 10*time.Second, "the waiter to queue on the last path", func() bool { return len(rawChildren(t, other, c)) == 2 })
	if err := link.Latency(300*time.Millisecond, 0); err != nil {
		t.Fatal(err)
	}
	unlocked := make(chan error, 1)
	go func() { unlocked <- m.Unlock(ctx) }()
	if err := <-acquired; err != nil {
		t.Fatal(err)
	}
	if hctx.Err() == nil {
		t.Fatalf("another Mutex acquired %s while the multi-lock's Context was still live", c)
	}
	if err := <-unlocked; err != nil {
		t.Fatal(err)
	}
	if !errors.Is(context.Cause(hctx), recipes.ErrReleased) {
		t.Fatalf("cause after Unlock = %v, want recipes.ErrReleased", context.Cause(hctx))
	}
	if err := waiter.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
