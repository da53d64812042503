package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// TestExpiredWaiterQueuesAgainAtOnce is the regression test of etcd
// #19597 (docs/upstream-bugs.md): a waiter whose session expires behind a
// holder that keeps holding. Etcd's waiter watched only the key ahead of
// it and went on waiting, out of the queue, until that key went. Ours
// notices the new session at once (recipes' waitGone returns errRetry)
// and queues again under it: the check that fails on the naive waiter is
// that a node of the new session appears while the holder still holds.
func TestExpiredWaiterQueuesAgainAtOnce(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := connect(t, e.Addrs())
	ensurePath(t, admin, path, nil)
	holder := newMutex(t, connect(t, e.Addrs()), path)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	link, err := e.NewLink(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s := connect(t, link.Addrs())
	waiter := newMutex(t, s, path)
	done := make(chan error, 1)
	go func() { done <- waiter.Lock(ctx) }()
	waitFor(t, 20*time.Second, "the waiter's node", func() bool { return len(rawChildren(t, admin, path)) == 2 })
	old := s.ID()
	if err := link.ExpireSession(ctx, old); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the waiter's new session", func() bool { return s.ID() != old && s.State() == recipes.StateConnected })
	waitFor(t, 20*time.Second, "a node of the waiter's new session while the holder holds", func() bool {
		for _, k := range rawChildren(t, admin, path) {
			if ok, st, err := admin.Conn().Exists(zkpath.Join(path, k)); err == nil && ok && st.EphemeralOwner == s.ID() {
				return true
			}
		}
		return false
	})
	if err := holder.Context().Err(); err != nil {
		t.Fatalf("the holder lost its holding meanwhile: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("the waiter's Lock returned (%v) while the holder holds", err)
	default:
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("the waiter did not get the lock after the holder's unlock")
	}
	if waiter.Fence().SessionID != s.ID() {
		t.Errorf("the waiter holds under session 0x%x, want 0x%x", waiter.Fence().SessionID, s.ID())
	}
	if err := waiter.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestLockAfterLostHoldingAnswers is the regression test of kazoo #282
// (docs/upstream-bugs.md): a holding lost to a cut (the default policy
// ends it at the suspension) and a Lock on the same Mutex once the
// connection is back, under the same session, without an Unlock first.
// Kazoo's Lock remembered that it was acquired until a release and retried
// that acquisition for ever: a hang. Ours answers ErrAlreadyHeld at once;
// the Unlock it asks for deletes the node the session still owns, and the
// next Lock holds. The check that fails on the naive lock is the bound on
// the second Lock's answer.
func TestLockAfterLostHoldingAnswers(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	link, err := e.NewLink(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	admin, s := connect(t, e.Addrs()), connect(t, link.Addrs())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := newMutex(t, s, path)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	sid := s.ID()
	if err := link.Cut(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the holding lost to the suspension", func() bool { return m.Context().Err() != nil })
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the same session usable again", func() bool {
		return s.ID() == sid && (s.State() == recipes.StateConnected || s.State() == recipes.StateReconnected)
	})
	if n := len(rawChildren(t, admin, path)); n != 1 {
		t.Fatalf("%d nodes after the reconnection, want 1 (the lost holding's, its session alive)", n)
	}
	lctx, lcancel := context.WithTimeout(ctx, 5*time.Second)
	start := time.Now()
	err = m.Lock(lctx)
	lcancel()
	if !errors.Is(err, lock.ErrAlreadyHeld) {
		t.Fatalf("Lock on a Mutex whose holding was lost = %v after %v, want lock.ErrAlreadyHeld at once", err, time.Since(start))
	}
	_ = m.Unlock(ctx) // its error says the holding was lost
	waitFor(t, 20*time.Second, "the lost holding's node deleted", func() bool { return len(rawChildren(t, admin, path)) == 0 })
	other := newMutex(t, admin, path)
	if err := other.Lock(ctx); err != nil {
		t.Fatalf("a bystander's Lock after the Unlock: %v", err)
	}
	if err := other.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatalf("Lock after the Unlock: %v", err)
	}
	if m.Fence().SessionID != sid {
		t.Errorf("holds under session 0x%x, want 0x%x", m.Fence().SessionID, sid)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestAmbiguousCreateAfterSessionDropped is the regression test of
// CURATOR-604 (docs/upstream-bugs.md): a client gives its session up while
// the server still has it (Curator's LOST: a new ZooKeeper handle; here
// testenv.SessionDropper) with a create in flight whose reply was lost.
// Curator's protected create found the node by its GUID under the new
// session and took it, though the old session owned it and the server was
// about to delete it. Ours keeps a node found by its GUID only when the
// current session owns it (recipes' adopt): the old session's node is
// deleted at once and the lock is taken on a node of the new session. The
// checks that fail on the naive adoption are the owner of the holding's
// node and the old node's deletion while its session lives.
func TestAmbiguousCreateAfterSessionDropped(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	link, err := e.NewLink(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin := connect(t, e.Addrs())
	ensurePath(t, admin, path, nil)
	d := &testenv.SessionDropper{}
	s := testutil.ConnectWrapped(t, link.Addrs(), d.Wrap)
	m := newMutex(t, s, path)
	old := s.ID()
	// A first Lock and Unlock before the link is half-open: in the secured
	// pass it runs the Session's squatting check of path (1 getACL, once),
	// whose lost reply would otherwise hold the create back.
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := link.HalfOpen(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Lock(ctx) }()
	waitFor(t, 20*time.Second, "the create applied, its reply lost", func() bool { return len(rawChildren(t, admin, path)) == 1 })
	first := zkpath.Join(path, rawChildren(t, admin, path)[0])
	// The client gives its session up: its next connection asks for a new
	// one; the server keeps the old one a session timeout.
	d.Drop(old)
	for _, step := range []func(...int) error{link.Heal, link.Cut, link.Restore} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("Lock did not return after the new session")
	}
	sid := s.ID()
	if sid == old {
		t.Fatal("the session was not given up")
	}
	ok, st, err := admin.Conn().Exists(m.Fence().Path)
	if err != nil || !ok || st.EphemeralOwner != sid || m.Fence().SessionID != sid {
		t.Fatalf("holding on %s (fence session 0x%x): exists %v, owner 0x%x, err %v; want a node of the new session 0x%x",
			m.Fence().Path, m.Fence().SessionID, ok, ownerOf(st), err, sid)
	}
	if ok, st, err := admin.Conn().Exists(first); err != nil || ok {
		t.Errorf("the old session's node %s: exists %v (owner 0x%x), err %v; want it deleted, not adopted", first, ok, ownerOf(st), err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

func ownerOf(st *zk.Stat) int64 {
	if st == nil {
		return 0
	}
	return st.EphemeralOwner
}
