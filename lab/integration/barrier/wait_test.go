package barrier_test

import (
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
)

// TestBarrierWaitSeesNodeAbsent guards Barrier's invariant "Wait returns
// nil only after it has seen the node absent (no waiter passes a barrier
// that is set)" and Wait's promise "Survives disconnects and session loss":
// while a waiter waits on a set barrier, its session expires (go-zookeeper
// ends every watch of the old session and goes on with a new one), and
// then another client writes the barrier node's data (a data watch event).
// Neither is the node's removal: after each, the waiter must look again
// and go on waiting; it passes once the barrier is removed.
func TestBarrierWaitSeesNodeAbsent(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	b := newBarrier(t, admin, path)
	if err := b.Set(ctx); err != nil {
		t.Fatal(err)
	}
	link, err := e.NewLink("barrier-wait-expiry")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s, counter := testutil.CountedSession(t, link.Addrs())
	w := newBarrier(t, s, path)
	before := counter.Snapshot()
	waited := make(chan error, 1)
	go func() { waited <- w.Wait(ctx) }()
	// looked waits until the waiter has sent n more exists since before (and
	// had as many replies), or has returned.
	returned := false
	looked := func(what string, n int64) {
		t.Helper()
		waitFor(t, 30*time.Second, what, func() bool {
			if len(waited) > 0 {
				returned = true
				return true
			}
			d := counter.Snapshot().Sub(before)
			return d.Req(zkcount.OpExists) >= n && d.Replies >= n
		})
		if returned {
			t.Fatalf("Wait returned (%v) on a set barrier, after %s", <-waited, what)
		}
	}
	looked("the waiter's first look", 1)
	old := s.ID()
	if err := link.ExpireSession(ctx, old); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the waiter's new session", func() bool { id := s.ID(); return id != 0 && id != old })
	looked("the session's expiry", 2)
	if _, err := admin.Conn().Set(path, []byte("still set"), -1); err != nil {
		t.Fatal(err)
	}
	looked("a write of the barrier node's data", 3)
	if err := b.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("Wait after Remove = %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Wait did not return within 30 s of the barrier's removal")
	}
}
