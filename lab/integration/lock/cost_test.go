package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/lock"
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
	wantOps(t, "uncontended Lock", ca.Snapshot().Sub(before), map[zkcount.Op]int64{zkcount.OpCreate: 1, zkcount.OpGetChildren2: 1})

	before = cb.Snapshot()
	if err := mb.TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("TryLock = %v, want ErrLocked", err)
	}
	wantOps(t, "TryLock on a held lock", cb.Snapshot().Sub(before), map[zkcount.Op]int64{zkcount.OpGetChildren2: 1})

	// b waits behind a, c behind b.
	bDone, cDone := make(chan error, 1), make(chan error, 1)
	bStart := cb.Snapshot()
	go func() { bDone <- mb.Lock(ctx) }()
	waitFor(t, 10*time.Second, "b watching a", func() bool { return cb.Snapshot().Sub(bStart).Req(zkcount.OpGetData) == 1 })
	go func() { cDone <- mc.Lock(ctx) }()
	cStart := cc.Snapshot()
	waitFor(t, 10*time.Second, "c watching b", func() bool { return cc.Snapshot().Sub(cStart).Req(zkcount.OpGetData) == 1 })
	wantOps(t, "Lock entering the queue", cb.Snapshot().Sub(bStart), map[zkcount.Op]int64{zkcount.OpCreate: 1, zkcount.OpGetChildren2: 1, zkcount.OpGetData: 1})

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

// TestSemaphoreCost records what a lease costs (reported, and pinned so a
// change is noticed).
func TestSemaphoreCost(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	ensurePath(t, admin, path+"/locks", nil)
	ensurePath(t, admin, path+"/leases", nil)
	s, cs := countedSession(t, e.Addrs())
	sem := newSemaphore(t, s, path, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	before := cs.Snapshot()
	l, err := sem.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantOps(t, "uncontended Acquire", cs.Snapshot().Sub(before), map[zkcount.Op]int64{
		zkcount.OpCreate: 2, zkcount.OpGetChildren2: 2, zkcount.OpDelete: 1,
	})
	before = cs.Snapshot()
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	wantOps(t, "Release", cs.Snapshot().Sub(before), map[zkcount.Op]int64{zkcount.OpDelete: 1})
}
