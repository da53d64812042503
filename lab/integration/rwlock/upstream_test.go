package rwlock_test

import (
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// ownedBy returns the name of the child of path whose ephemeral owner is
// sid, or "" when there is none.
func ownedBy(t *testing.T, admin *recipes.Session, path string, sid int64) string {
	t.Helper()
	kids, _, err := admin.Conn().Children(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kids {
		if ok, st, err := admin.Conn().Exists(zkpath.Join(path, k)); err == nil && ok && st.EphemeralOwner == sid {
			return k
		}
	}
	return ""
}

// TestExpiredWaitingWriterQueuesAgain is the regression test of etcd
// #16221 (docs/upstream-bugs.md): a writer W2 waits behind the holder W1,
// a writer W3 behind W2; W2's session expires while it waits. Etcd's
// writer kept waiting for the nodes below its old one and held once they
// were gone, its own node gone too, while W3 (whose predecessor had gone)
// held as well. Ours starts over under its new session: its new node sorts
// after W3's, so when W1 unlocks W3 holds alone, and W2 holds only after
// W3 unlocks. The check that fails on the naive writer: once W1 unlocked,
// W2 has a node of its new session behind W3's, and has not returned.
func TestExpiredWaitingWriterQueuesAgain(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := testCtx(t, 2*time.Minute)
	admin := connect(t, e.Addrs())
	ensurePath(t, admin, path)
	w1 := newRW(t, connect(t, e.Addrs()), path)
	if err := w1.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	link, err := e.NewLink(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = link.Close() })
	s2 := connect(t, link.Addrs())
	w2 := newRW(t, s2, path)
	w2Done := async(func() error { return w2.Lock(ctx) })
	waitChildren(t, admin, path, 2)
	w3 := newRW(t, connect(t, e.Addrs()), path)
	w3Done := async(func() error { return w3.Lock(ctx) })
	waitChildren(t, admin, path, 3)
	old := s2.ID()
	if err := link.ExpireSession(ctx, old); err != nil {
		t.Fatal(err)
	}
	waitFor(t, waitLong, "W2's new session", func() bool { return s2.ID() != old && s2.State() == recipes.StateConnected })
	var w2Node string
	waitFor(t, waitLong, "W2 queued again under its new session", func() bool {
		w2Node = ownedBy(t, admin, path, s2.ID())
		return w2Node != ""
	})
	if err := w1.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, w3Done, waitLong, "W3 after W1's unlock"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-w2Done:
		t.Fatalf("W2's Lock returned (%v) while W3 holds the write lock", err)
	default:
	}
	if w3Node := w3.Node(); w2Node[len(w2Node)-10:] < w3Node[len(w3Node)-10:] { // both 10-digit sequences
		t.Fatalf("W2's new node %s sorts before W3's %s", w2Node, w3Node)
	}
	if err := w3.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, w2Done, waitLong, "W2 after W3's unlock"); err != nil {
		t.Fatal(err)
	}
	if got := w2.Fence().SessionID; got != s2.ID() || got == old {
		t.Errorf("W2 holds under session 0x%x, want its new session 0x%x", got, s2.ID())
	}
	if err := w2.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	waitChildren(t, admin, path, 0)
}
