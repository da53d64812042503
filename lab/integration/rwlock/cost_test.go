package rwlock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/rwlock"
)

// TestCost counts requests on the wire for the costs the package documents.
func TestCost(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	ensurePath(t, admin, path) // lazy parent creation is not part of the steady-state cost
	a, ca := countedSession(t, e.Addrs())
	b, cb := countedSession(t, e.Addrs())
	ma, mb := newRW(t, a, path), newRW(t, b, path)
	ctx := testCtx(t, time.Minute)
	step := func(what string, c *zkcount.Counter, f func() error, want map[zkcount.Op]int64) {
		t.Helper()
		before := c.Snapshot()
		if err := f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		wantOps(t, what, c.Snapshot().Sub(before), want)
	}
	// acquired is step for an acquisition that creates a node: the core
	// reads the node's czxid with 1 getData unless the parent's child list
	// proves it (only possible while no child of the path was ever
	// deleted: ZooKeeper's cversion counts deletes, its sequence does not).
	acquired := func(what string, c *zkcount.Counter, f func() error, want map[zkcount.Op]int64) {
		t.Helper()
		before := c.Snapshot()
		if err := f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		d := c.Snapshot().Sub(before)
		if d.Req(zkcount.OpGetData) == 1 {
			want[zkcount.OpGetData] = 1
		}
		wantOps(t, what, d, want)
	}
	create, children, get, del := zkcount.OpCreate, zkcount.OpGetChildren2, zkcount.OpGetData, zkcount.OpDelete

	lockStart := ca.Snapshot()
	// a's first create under path: its open-parent check in the secured pass.
	acquired("uncontended Lock", ca, func() error { return ma.Lock(ctx) }, testutil.FirstCreateUnder(1, map[zkcount.Op]int64{create: 1, children: 1}))
	writeWatched := ca.Snapshot().Sub(lockStart).Req(get) == 1 // the getData armed a watch on our node
	step("TryRLock against a writer", cb, func() error {
		if err := mb.Reader().TryLock(ctx); !errors.Is(err, rwlock.ErrLocked) {
			return err
		}
		return nil
	}, map[zkcount.Op]int64{children: 1})
	step("TryLock against a writer", cb, func() error {
		if err := mb.TryLock(ctx); !errors.Is(err, rwlock.ErrLocked) {
			return err
		}
		return nil
	}, map[zkcount.Op]int64{children: 1})
	// The downgrade also watches the write node (from the background)
	// unless the Lock's getData already did.
	before := ca.Snapshot()
	if err := ma.Reader().Lock(ctx); err != nil {
		t.Fatal(err)
	}
	wantGet := int64(1)
	if !writeWatched {
		wantGet = 2
		waitFor(t, waitLong, "watch on the write node", func() bool { return ca.Snapshot().Sub(before).Req(get) == 2 })
	}
	wantOps(t, "RLock while writing (downgrade)", ca.Snapshot().Sub(before), map[zkcount.Op]int64{create: 1, get: wantGet})
	step("Unlock after a downgrade", ca, func() error { return ma.Unlock(ctx) }, map[zkcount.Op]int64{children: 1, del: 1})
	// b's first create under path (its Try calls above created nothing): its
	// open-parent check in the secured pass.
	acquired("uncontended RLock", cb, func() error { return mb.Reader().Lock(ctx) }, testutil.FirstCreateUnder(1, map[zkcount.Op]int64{create: 1, children: 1}))
	step("RUnlock", ca, func() error { return ma.Reader().Unlock(ctx) }, map[zkcount.Op]int64{del: 1})
	step("TryLock against readers", ca, func() error {
		if err := ma.TryLock(ctx); !errors.Is(err, rwlock.ErrLocked) {
			return err
		}
		return nil
	}, map[zkcount.Op]int64{children: 1})
	step("RUnlock", cb, func() error { return mb.Reader().Unlock(ctx) }, map[zkcount.Op]int64{del: 1})
	acquired("uncontended TryRLock", cb, func() error { return mb.Reader().TryLock(ctx) }, map[zkcount.Op]int64{children: 2, create: 1})
	step("RUnlock", cb, func() error { return mb.Reader().Unlock(ctx) }, map[zkcount.Op]int64{del: 1})
	acquired("uncontended TryLock", ca, func() error { return ma.TryLock(ctx) }, map[zkcount.Op]int64{children: 2, create: 1})
	step("Unlock", ca, func() error { return ma.Unlock(ctx) }, map[zkcount.Op]int64{del: 1})
}

// TestWakeups: with a writer holding, three readers and then a writer
// queued, the holder's release wakes exactly the three readers (they hold
// without listing again), not the writer; the readers' releases wake
// nobody until the last one ahead of the writer goes, which wakes the
// writer only.
func TestWakeups(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	ensurePath(t, admin, path)
	ctx := testCtx(t, time.Minute)
	w := newRW(t, connect(t, e.Addrs()), path)
	if err := w.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	type waiter struct {
		m    *rwlock.RWMutex
		c    *zkcount.Counter
		done <-chan error
	}
	queue := func(write bool) waiter {
		s, c := countedSession(t, e.Addrs())
		m := newRW(t, s, path)
		start := c.Snapshot()
		f := m.Reader().Lock
		if write {
			f = m.Lock
		}
		done := async(func() error { return f(ctx) })
		waitFor(t, waitLong, "waiter watching", func() bool { return c.Snapshot().Sub(start).Req(zkcount.OpGetData) == 1 })
		return waiter{m, c, done}
	}
	readers := []waiter{queue(false), queue(false), queue(false)}
	w2 := queue(true)

	snaps := make([]zkcount.Counts, len(readers))
	for i, r := range readers {
		snaps[i] = r.c.Snapshot()
	}
	w2snap := w2.c.Snapshot()
	if err := w.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	for i, r := range readers {
		if err := recv(t, r.done, waitLong, "reader"); err != nil {
			t.Fatal(err)
		}
		d := r.c.Snapshot().Sub(snaps[i])
		if d.Notifications != 1 || d.Req(zkcount.OpGetChildren2) != 0 {
			t.Errorf("reader %d: %d notifications, %v; want 1 notification and no getChildren", i, d.Notifications, d.Requests)
		}
	}
	for i, r := range readers[:2] {
		if err := r.m.Reader().Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if !pending(w2.done) {
			t.Fatalf("writer got in with %d readers left", 2-i)
		}
	}
	if d := w2.c.Snapshot().Sub(w2snap); d.Notifications != 0 {
		t.Errorf("queued writer woken %d times before the reader ahead of it left", d.Notifications)
	}
	if err := readers[2].m.Reader().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, w2.done, waitLong, "writer"); err != nil {
		t.Fatal(err)
	}
	// Woken with three departed nodes (W, R1, R2) still in its list, the
	// writer lists once instead of a getData per departed node.
	d := w2.c.Snapshot().Sub(w2snap)
	if d.Notifications != 1 || d.Req(zkcount.OpGetChildren2) != 1 || d.Req(zkcount.OpGetData) > 1 {
		t.Errorf("writer: %d notifications, %v; want 1 notification, 1 getChildren and at most 1 getData (own node)", d.Notifications, d.Requests)
	}
	t.Logf("writer after its wake-up: %v", d.Requests)
	if err := w2.m.Unlock(context.WithoutCancel(ctx)); err != nil {
		t.Fatal(err)
	}
}

// TestWokenSecondInLine pins what a waiter second in line costs once the
// holder releases: a writer in the Curator dialect lists once more before
// it holds (a Curator 5.5+ downgrade can put an unsequenced read node ahead
// of it), a reader (waiting for writers only) and a kazoo writer do not.
func TestWokenSecondInLine(t *testing.T) {
	e := ensemble(t)
	ctx := testCtx(t, time.Minute)
	for _, tc := range []struct {
		name     string
		opts     []rwlock.Option
		write    bool
		children int64
	}{
		{"curator writer", nil, true, 1},
		{"curator reader", nil, false, 0},
		{"kazoo writer", []rwlock.Option{rwlock.WithDialect(recipes.Kazoo)}, true, 0},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			path := testPath(t)
			admin := connect(t, e.Addrs())
			ensurePath(t, admin, path)
			holder := newRW(t, connect(t, e.Addrs()), path, tc.opts...)
			if err := holder.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			s, c := countedSession(t, e.Addrs())
			m := newRW(t, s, path, tc.opts...)
			start := c.Snapshot()
			f := m.Reader().Lock
			if tc.write {
				f = m.Lock
			}
			done := async(func() error { return f(ctx) })
			// Watching once its getData is answered: a reply still in
			// flight could see the holder's node already deleted, and the
			// waiter would hold without a notification.
			waitFor(t, waitLong, "waiter watching", func() bool {
				d := c.Snapshot().Sub(start)
				return d.Req(zkcount.OpGetData) == 1 && d.Replies == d.Total()
			})
			woken := c.Snapshot()
			if err := holder.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			if err := recv(t, done, waitLong, "waiter"); err != nil {
				t.Fatal(err)
			}
			d := c.Snapshot().Sub(woken)
			// The getData on our own node (czxid) is skipped when the
			// first listing proved it; it is not part of what is pinned.
			if d.Notifications != 1 || d.Req(zkcount.OpGetChildren2) != tc.children || d.Total()-d.Req(zkcount.OpGetData)-d.Req(zkcount.OpGetChildren2) != 0 || d.Req(zkcount.OpGetData) > 1 {
				t.Errorf("after the wake-up: %d notifications, %v; want 1 notification, %d getChildren, at most 1 getData (own node)", d.Notifications, d.Requests, tc.children)
			}
			t.Logf("%s after its wake-up: %v", tc.name, d.Requests)
			unlock := m.Reader().Unlock
			if tc.write {
				unlock = m.Unlock
			}
			if err := unlock(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
