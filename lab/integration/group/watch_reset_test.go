package group_test

import (
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/group"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestWatchDropsMemberThatLeftDuringReset protects "A member whose process
// died (its session closed or silent) stops being listed when its session
// ends" and Watch's "a new Snapshot after every change seen: a member
// joined, left (its node deleted: Leave, or its session expired) ...":
// members that leave while the watching session is lost (one by Leave, one
// by its session's close) are not in any Snapshot that Watch sends after
// it recovers under a new session. Both leave while the watcher hears
// nothing, so they are gone before the watch lists the group again.
func TestWatchDropsMemberThatLeftDuringReset(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	s := connect(t, e.Addrs())
	join(t, ctx, s, path, "a")
	left := join(t, ctx, s, path, "left")
	dying := connect(t, e.Addrs())
	join(t, ctx, dying, path, "died")
	ws, link := private(t, e, "watcher")
	w := group.Watch(ctx, ws, path)
	defer w.Stop()
	until(t, w, 10*time.Second, "a, died and left", func(s group.Snapshot) bool { return ids(s, "a", "died", "left") })

	// The watcher hears nothing from here until its session has expired.
	old := ws.ID()
	if err := link.Blackhole(); err != nil {
		t.Fatal(err)
	}
	if err := left.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	testutil.CloseSession(t, dying) // no Leave: the process just ends
	if got := members(t, ctx, s, path); !ids(got, "a") {
		t.Fatalf("members after the leaves: %v", got.IDs())
	}
	if err := link.AwaitExpiry(ctx, old); err != nil {
		t.Fatal(err)
	}
	healed := time.Now()
	// A change after the expiry: the Snapshot that reports it was sent
	// after the watch recovered, whenever the watch lists the group again.
	join(t, ctx, s, path, "c")
	snap := until(t, w, 20*time.Second, "c", func(snap group.Snapshot) bool {
		if _, ok := snap.Get("left"); ok {
			t.Fatalf("a Snapshot after the watcher's session expired lists the member that left meanwhile: %v", snap.IDs())
		}
		if _, ok := snap.Get("died"); ok {
			t.Fatalf("a Snapshot after the watcher's session expired lists the member whose session closed meanwhile: %v", snap.IDs())
		}
		_, ok := snap.Get("c")
		return ok
	})
	t.Logf("watch recovered %v after the watcher's link was healed", time.Since(healed))
	if !ids(snap, "a", "c") {
		t.Fatalf("after the watch recovered: %v, want [a c]", snap.IDs())
	}
	recoveredUnderNewSession(t, w, ws, old)
}

// TestWatchSendsReincarnatedMember protects Watch's "a new Snapshot after
// every change seen" together with Info's "a member whose node was created
// again (after a session loss) has a new, larger [Czxid]": when the
// watcher and a never-updated member both lose their sessions, and the
// member's node is created again under its new session before the watch
// lists the group again, Watch sends a Snapshot whose member has the new
// SessionID and Czxid, with nothing else changed (no other change comes to
// carry them: the reincarnation alone must be sent).
func TestWatchSendsReincarnatedMember(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	reader := connect(t, e.Addrs())
	ms, mlink := private(t, e, "member")
	join(t, ctx, ms, path, "m", group.WithData([]byte("payload")))
	ws, wlink := private(t, e, "watcher")
	w := group.Watch(ctx, ws, path)
	defer w.Stop()
	first := until(t, w, 10*time.Second, "m", func(s group.Snapshot) bool { return ids(s, "m") })[0]
	if first.SessionID != ms.ID() {
		t.Fatalf("member %+v, want session 0x%x", first, ms.ID())
	}

	// Both sessions go silent and expire; the member comes back first,
	// while the watcher still hears nothing.
	oldMember, oldWatcher := ms.ID(), ws.ID()
	if err := wlink.Blackhole(); err != nil {
		t.Fatal(err)
	}
	if err := mlink.ExpireSession(ctx, oldMember); err != nil {
		t.Fatal(err)
	}
	var back group.Info
	waitFor(t, 20*time.Second, "the member's node created again", func() bool {
		i, ok := members(t, ctx, reader, path).Get("m")
		back = i
		return ok && i.SessionID != oldMember && i.SessionID == ms.ID()
	})
	if back.Czxid <= first.Czxid || back.Version != first.Version || string(back.Data) != string(first.Data) {
		t.Fatalf("the member back as %+v after %+v: want a new node, its data as before", back, first)
	}
	if err := wlink.AwaitExpiry(ctx, oldWatcher); err != nil {
		t.Fatal(err)
	}
	healed := time.Now()
	got := until(t, w, 20*time.Second, "m's new incarnation", func(snap group.Snapshot) bool {
		i, ok := snap.Get("m")
		return ok && i.SessionID == back.SessionID && i.Czxid == back.Czxid
	})
	t.Logf("new incarnation sent %v after the watcher's link was healed", time.Since(healed))
	if !ids(got, "m") {
		t.Fatalf("after the watch recovered: %v, want [m]", got.IDs())
	}
	recoveredUnderNewSession(t, w, ws, oldWatcher)
}

// recoveredUnderNewSession fails t unless the watch, open, recovered under
// a session other than old.
func recoveredUnderNewSession(t *testing.T, w *recipes.Stream[group.Snapshot], ws *recipes.Session, old int64) {
	t.Helper()
	if ws.ID() == old {
		t.Fatal("the watcher's session was not replaced")
	}
	if err := w.Err(); err != nil {
		t.Fatalf("Err while open: %v", err)
	}
}
