package lock_test

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
	sharedrecipe "github.com/zkrecipes/zkrecipes/shared"
)

var (
	countedSession = testutil.CountedSession
	wantOps        = testutil.WantOps
)

// TestMutexCost counts requests on the wire: uncontended Lock = 1 create +
// 1 getChildren; Unlock = 1 delete; TryLock against a holder = 1
// getChildren and no write; a release wakes exactly one waiter, which, being
// second in line, holds without listing again (every client creates mutex
// nodes as sequential nodes, so none can have appeared ahead of it; compare
// rwlock's TestWokenSecondInLine, where a Curator writer must list).
func TestMutexCost(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	ensurePath(t, admin, path, nil) // parents exist: lazy creation is not part of the steady-state cost
	a, ca := countedSession(t, e.Addrs())
	b, cb := countedSession(t, e.Addrs())
	c, cc := countedSession(t, e.Addrs())
	ma, mb, mc := newMutex(t, a, path), newMutex(t, b, path), newMutex(t, c, path)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	before := ca.Snapshot()
	if err := ma.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	// a's first create under path: its open-parent check in the secured pass.
	wantOps(t, "uncontended Lock", ca.Snapshot().Sub(before), testutil.FirstCreateUnder(1, map[zkcount.Op]int64{zkcount.OpCreate: 1, zkcount.OpGetChildren2: 1}))

	before = cb.Snapshot()
	if err := mb.TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("TryLock = %v, want ErrLocked", err)
	}
	wantOps(t, "TryLock on a held lock", cb.Snapshot().Sub(before), map[zkcount.Op]int64{zkcount.OpGetChildren2: 1})

	// b waits behind a, c behind b.
	bDone, cDone := make(chan error, 1), make(chan error, 1)
	bStart := cb.Snapshot()
	go func() { bDone <- mb.Lock(ctx) }()
	waitFor(t, 10*time.Second, "b watching a", func() bool { return answered(cb.Snapshot().Sub(bStart), zkcount.OpGetData, 1) })
	go func() { cDone <- mc.Lock(ctx) }()
	cStart := cc.Snapshot()
	waitFor(t, 10*time.Second, "c watching b", func() bool { return answered(cc.Snapshot().Sub(cStart), zkcount.OpGetData, 1) })
	// b's first create under path (its TryLock created nothing): its
	// open-parent check in the secured pass.
	wantOps(t, "Lock entering the queue", cb.Snapshot().Sub(bStart), testutil.FirstCreateUnder(1, map[zkcount.Op]int64{zkcount.OpCreate: 1, zkcount.OpGetChildren2: 1, zkcount.OpGetData: 1}))

	bWait, cWait, aBefore := cb.Snapshot(), cc.Snapshot(), ca.Snapshot()
	if err := ma.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	wantOps(t, "Unlock", ca.Snapshot().Sub(aBefore), map[zkcount.Op]int64{zkcount.OpDelete: 1})
	if err := <-bDone; err != nil {
		t.Fatal(err)
	}
	bd := cb.Snapshot().Sub(bWait)
	if bd.Notifications != 1 || bd.Req(zkcount.OpGetChildren2) != 0 {
		t.Errorf("second in line: %v, %d notifications; want 1 notification and no getChildren", bd.Requests, bd.Notifications)
	}
	t.Logf("second in line took the lock with %v after 1 notification", bd.Requests)
	// Anything the delete triggered for c is delivered before c's answer to
	// a later sync+read on the same connection.
	if _, err := c.Conn().Sync(path); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Conn().Exists(path); err != nil {
		t.Fatal(err)
	}
	if n := cc.Snapshot().Sub(cWait).Notifications; n != 0 {
		t.Errorf("third in line got %d notifications from the first release", n)
	}
	select {
	case err := <-cDone:
		t.Fatalf("c acquired while b holds: %v", err)
	default:
	}
	cBefore := cc.Snapshot()
	if err := mb.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-cDone; err != nil {
		t.Fatal(err)
	}
	if cd := cc.Snapshot().Sub(cBefore); cd.Notifications != 1 || cd.Req(zkcount.OpGetChildren2) != 0 {
		t.Errorf("third in line: %v, %d notifications; want 1 notification and no getChildren", cd.Requests, cd.Notifications)
	}
	if err := mc.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestSemaphoreCost pins what a lease costs, with the parents made: a free
// lease is 5 requests (mutex create + getChildren, lease create, leases
// getChildren, mutex delete); the first acquisition of a fixed-n Semaphore
// writes the record (+1 setData), another Semaphore's first reads it (+1
// getData), later ones cost nothing more; count-based, +1 getData of the
// count and no record; AcquireN(3) creates 3 leases under one mutex
// holding; a release is 1 delete.
func TestSemaphoreCost(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	ensurePath(t, admin, path+"/locks", nil)
	ensurePath(t, admin, path+"/leases", nil)
	s, cs := countedSession(t, e.Addrs())
	sem := newSemaphore(t, s, path, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	free := map[zkcount.Op]int64{zkcount.OpCreate: 2, zkcount.OpGetChildren2: 2, zkcount.OpDelete: 1}
	with := func(op zkcount.Op) map[zkcount.Op]int64 {
		m := maps.Clone(free)
		m[op]++
		return m
	}
	acquire := func(what string, sem *lock.Semaphore, c *zkcount.Counter, want map[zkcount.Op]int64) *lock.Permit {
		t.Helper()
		before := c.Snapshot()
		l, err := sem.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wantOps(t, what, c.Snapshot().Sub(before), want)
		return l
	}
	release := func(l *lock.Permit, c *zkcount.Counter) {
		t.Helper()
		before := c.Snapshot()
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
		wantOps(t, "Release", c.Snapshot().Sub(before), map[zkcount.Op]int64{zkcount.OpDelete: 1})
	}
	// The first Acquire of each Session is its first create under path/locks
	// and path/leases: 2 open-parent checks in the secured pass.
	l := acquire("first Acquire (writes the record)", sem, cs, testutil.FirstCreateUnder(2, with(zkcount.OpSetData)))
	release(l, cs)
	l = acquire("uncontended Acquire", sem, cs, free)
	s2, cs2 := countedSession(t, e.Addrs())
	l2 := acquire("another Semaphore's first Acquire (reads the record)", newSemaphore(t, s2, path, 3), cs2, testutil.FirstCreateUnder(2, with(zkcount.OpGetData)))
	release(l2, cs2)
	release(l, cs)

	before := cs.Snapshot()
	ls, err := sem.AcquireN(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	wantOps(t, "AcquireN(3)", cs.Snapshot().Sub(before), map[zkcount.Op]int64{zkcount.OpCreate: 4, zkcount.OpGetChildren2: 2, zkcount.OpDelete: 1})
	before = cs.Snapshot()
	if err := ls.Release(ctx); err != nil {
		t.Fatal(err)
	}
	wantOps(t, "Permits.Release of 3", cs.Snapshot().Sub(before), map[zkcount.Op]int64{zkcount.OpDelete: 3})

	cpath := path + "-max"
	ensurePath(t, admin, cpath, sharedrecipe.EncodeCount(2))
	count, err := sharedrecipe.NewCount(s, cpath, 2)
	if err != nil {
		t.Fatal(err)
	}
	csem, err := lock.NewSemaphoreCount(s, path, count)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		release(acquire("count-based Acquire", csem, cs, with(zkcount.OpGetData)), cs)
	}
}

// TestSemaphoreTryAcquireCost proves, on the wire, that TryAcquire writes
// nothing when it cannot have a lease: a full semaphore costs 1 getChildren
// (count-based: + 1 getData, and a missing count node is not created), a
// mutex held by another acquirer 1 getChildren more; a free lease costs 7
// requests.
func TestSemaphoreTryAcquireCost(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	ensurePath(t, admin, path+"/locks", nil)
	ensurePath(t, admin, path+"/leases", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, c := countedSession(t, e.Addrs())
	try := func(what string, sem *lock.Semaphore, qty int, want map[zkcount.Op]int64) {
		t.Helper()
		before := c.Snapshot()
		ls, err := sem.TryAcquireN(ctx, qty)
		if !errors.Is(err, lock.ErrNoPermit) || !errors.Is(err, recipes.ErrWouldBlock) || ls != nil {
			t.Fatalf("%s: TryAcquireN(%d) = %v, %v; want ErrNoPermit", what, qty, ls, err)
		}
		wantOps(t, what, c.Snapshot().Sub(before), want)
	}
	holder := newSemaphore(t, admin, path, 2)
	held, err := holder.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sem := newSemaphore(t, s, path, 2)
	try("2 of 2 asked, 1 held", sem, 2, map[zkcount.Op]int64{zkcount.OpGetChildren2: 1})
	// Another acquirer in the mutex: a lease is free, but it is ahead.
	inMutex := newMutex(t, admin, path+"/locks")
	if err := inMutex.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	try("mutex held by another acquirer", sem, 1, map[zkcount.Op]int64{zkcount.OpGetChildren2: 2})
	if err := inMutex.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	full, err := holder.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	try("full", sem, 1, map[zkcount.Op]int64{zkcount.OpGetChildren2: 1})
	for _, l := range []*lock.Permit{held, full} {
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		before := c.Snapshot()
		l, err := sem.TryAcquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 { // the first one also reads the record
			wantOps(t, "TryAcquire of a free lease", c.Snapshot().Sub(before), map[zkcount.Op]int64{
				zkcount.OpGetChildren2: 4, zkcount.OpCreate: 2, zkcount.OpDelete: 1,
			})
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}

	// Count-based, the count's node missing: it reads as the seed (0), and
	// is not created.
	cpath := path + "-max"
	count, err := sharedrecipe.NewCount(s, cpath, 0)
	if err != nil {
		t.Fatal(err)
	}
	csem, err := lock.NewSemaphoreCount(s, path, count)
	if err != nil {
		t.Fatal(err)
	}
	try("count-based, no count node, seed 0", csem, 1, map[zkcount.Op]int64{zkcount.OpGetChildren2: 1, zkcount.OpGetData: 1})
	if ok, _, err := admin.Conn().Exists(cpath); err != nil || ok {
		t.Fatalf("count node exists: %v, %v; TryAcquire must not create it", ok, err)
	}
	ensurePath(t, admin, cpath, sharedrecipe.EncodeCount(1))
	l, err := csem.TryAcquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	try("count-based, full", csem, 1, map[zkcount.Op]int64{zkcount.OpGetChildren2: 1, zkcount.OpGetData: 1})
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestSemaphoreCountWaitCost pins what a count-based acquirer that must
// wait costs: its way in (mutex, lease, a listing and a read of the count,
// then a listing with a child watch, a read of the count and its data
// watch, and in the background 1 getData per holding node); a change of the
// count that leaves it waiting, 1 getChildren + 2 getData (the count, and
// its watch set again); a release that lets it in, 1 getChildren + 1
// getData, then the mutex's delete.
func TestSemaphoreCountWaitCost(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	ensurePath(t, admin, path+"/locks", nil)
	ensurePath(t, admin, path+"/leases", nil)
	cpath := path + "-max"
	ensurePath(t, admin, cpath, sharedrecipe.EncodeCount(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	semOn := func(s *recipes.Session) *lock.Semaphore {
		count, err := sharedrecipe.NewCount(s, cpath, 1)
		if err != nil {
			t.Fatal(err)
		}
		sem, err := lock.NewSemaphoreCount(s, path, count)
		if err != nil {
			t.Fatal(err)
		}
		return sem
	}
	held, err := semOn(admin).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, c := countedSession(t, e.Addrs())
	done := make(chan error, 1)
	before := c.Snapshot()
	var l *lock.Permit
	go func() {
		var err error
		l, err = semOn(s).Acquire(ctx)
		done <- err
	}()
	reached := func(what string, since zkcount.Counts, want map[zkcount.Op]int64) {
		t.Helper()
		// Replies too: a request is counted when sent, and the watch
		// it sets is armed only once the server processed it; a change
		// made before that would wake nobody (the secured pass saw it).
		waitFor(t, 10*time.Second, what, func() bool {
			d := c.Snapshot().Sub(since)
			for op, n := range want {
				if d.Req(op) < n {
					return false
				}
			}
			return d.Replies >= d.Total()
		})
		wantOps(t, what, c.Snapshot().Sub(since), want)
	}
	// s's first creates under path/locks and path/leases: 2 open-parent
	// checks in the secured pass.
	reached("waiting", before, testutil.FirstCreateUnder(2, map[zkcount.Op]int64{zkcount.OpCreate: 2, zkcount.OpGetChildren2: 3, zkcount.OpGetData: 5}))
	before = c.Snapshot()
	if _, err := admin.Conn().Set(cpath, sharedrecipe.EncodeCount(1), -1); err != nil { // a change that frees nothing
		t.Fatal(err)
	}
	reached("woken by a change of the count", before, map[zkcount.Op]int64{zkcount.OpGetChildren2: 1, zkcount.OpGetData: 2})
	select {
	case err := <-done:
		t.Fatalf("Acquire returned with 1 held of 1: %v", err)
	default:
	}
	before = c.Snapshot()
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	wantOps(t, "woken by a release", c.Snapshot().Sub(before), map[zkcount.Op]int64{zkcount.OpGetChildren2: 1, zkcount.OpGetData: 1, zkcount.OpDelete: 1})
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestMultiMutexCost: an uncontended MultiMutex over 3 paths costs 3
// creates + 3 getChildren to lock and 3 deletes to unlock, nothing more
// (no watch is armed until Context is asked for); the first Context call
// costs 1 getData per path.
func TestMultiMutexCost(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	paths := []string{path + "/a", path + "/b", path + "/c"}
	for _, p := range paths {
		ensurePath(t, admin, p, nil)
	}
	s, c := countedSession(t, e.Addrs())
	m, err := lock.NewMulti(s, paths)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 2 {
		before := c.Snapshot()
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		d := c.Snapshot().Sub(before)
		first := 0
		if i == 0 {
			first = 3 // s's first creates under the 3 paths: open-parent checks in the secured pass
		}
		wantOps(t, "uncontended Lock+Unlock", d, testutil.FirstCreateUnder(first, map[zkcount.Op]int64{zkcount.OpCreate: 3, zkcount.OpGetChildren2: 3, zkcount.OpDelete: 3}))
		if d.Notifications != 0 {
			t.Errorf("uncontended Lock+Unlock got %d notifications", d.Notifications)
		}
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	before := c.Snapshot()
	if m.Context().Err() != nil {
		t.Fatal("context done while held")
	}
	waitFor(t, 10*time.Second, "the 3 watches armed", func() bool { return answered(c.Snapshot().Sub(before), zkcount.OpGetData, 3) })
	wantOps(t, "first Context", c.Snapshot().Sub(before), map[zkcount.Op]int64{zkcount.OpGetData: 3})
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// answered reports whether d counts n requests of op and a reply to every
// request it counts: a request is counted when sent, and the watch it sets
// is armed only once the server has processed it, so a test that changes
// a node next must wait for the replies too.
func answered(d zkcount.Counts, op zkcount.Op, n int64) bool {
	return d.Req(op) == n && d.Replies >= d.Total()
}
