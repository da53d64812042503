package recipes_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/recipes"
)

func newWatchSet(t *testing.T, s *recipes.Session) *recipes.WatchSet {
	t.Helper()
	w, err := s.NewWatchSet()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

// nextEvents waits for w's pending events (a value on Ready may find none
// left: an earlier Events took them).
func nextEvents(t *testing.T, w *recipes.WatchSet) []zk.Event {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case <-w.Ready():
			if evs := w.Events(); len(evs) > 0 {
				return evs
			}
		case <-deadline:
			t.Fatal("no event in 10s")
			return nil
		}
	}
}

func mustCreate(t *testing.T, s *recipes.Session, p, data string) {
	t.Helper()
	if _, err := s.Conn().Create(p, []byte(data), 0, testutil.ACL()); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("create %s: %v", p, err)
	}
}

// cleanPath returns the test's path, empty (an earlier run's nodes
// deleted).
func cleanPath(t *testing.T, s *recipes.Session) string {
	t.Helper()
	p := testPath(t)
	var rm func(p string)
	rm = func(p string) {
		for _, c := range rawChildren(t, s, p) {
			rm(p + "/" + c)
		}
		_ = s.Conn().Delete(p, -1)
	}
	rm(p)
	mustCreate(t, s, "/zkrecipes-test", "")
	mustCreate(t, s, p, "")
	return p
}

// TestWatchSetEvents: each kind of read leaves the watch it says, and the
// WatchSet reports its events, once per read, on one channel.
func TestWatchSetEvents(t *testing.T) {
	e := ensemble(t)
	s, admin := connect(t, e.Addrs()), connect(t, e.Addrs())
	p := cleanPath(t, admin)
	a, b, c := p+"/a", p+"/b", p+"/c"
	mustCreate(t, admin, a, "a1")
	mustCreate(t, admin, b, "")
	ctx := context.Background()
	w := newWatchSet(t, s)

	data, st, err := w.GetData(ctx, a)
	if err != nil || string(data) != "a1" || st.Version != 0 {
		t.Fatalf("GetData = %q, %v, %v", data, st, err)
	}
	if kids, _, err := w.Children(ctx, b); err != nil || len(kids) != 0 {
		t.Fatalf("Children = %v, %v", kids, err)
	}
	if ok, _, err := w.Exists(ctx, c); err != nil || ok {
		t.Fatalf("Exists = %v, %v", ok, err)
	}
	if _, _, err := w.GetData(ctx, p+"/missing"); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("GetData of a missing node: %v, want ErrNoNode", err)
	}

	_, _ = admin.Conn().Set(a, []byte("a2"), -1)
	_, _ = admin.Conn().Set(a, []byte("a3"), -1) // no watch left: no event
	mustCreate(t, admin, b+"/kid", "")
	mustCreate(t, admin, c, "")
	mustCreate(t, admin, p+"/missing", "") // GetData set no watch on it
	want := map[string]zk.EventType{a: zk.EventNodeDataChanged, b: zk.EventNodeChildrenChanged, c: zk.EventNodeCreated}
	got := map[string]zk.EventType{}
	for len(got) < len(want) {
		for _, ev := range nextEvents(t, w) {
			if _, dup := got[ev.Path]; dup {
				t.Fatalf("second event for %s: %v", ev.Path, ev)
			}
			got[ev.Path] = ev.Type
		}
	}
	for path, typ := range want {
		if got[path] != typ {
			t.Errorf("%s: event %v, want %v", path, got[path], typ)
		}
	}
	// Read again: watched again.
	if data, _, err := w.GetData(ctx, a); err != nil || string(data) != "a3" {
		t.Fatalf("GetData again = %q, %v", data, err)
	}
	_ = admin.Conn().Delete(a, -1)
	if evs := nextEvents(t, w); len(evs) != 1 || evs[0].Path != a || evs[0].Type != zk.EventNodeDeleted {
		t.Fatalf("after the delete: %v", evs)
	}
	if evs := w.Events(); evs != nil {
		t.Fatalf("unexpected events %v", evs)
	}
}

// TestWatchSetOneWatch: many reads of one path by several WatchSets leave
// one go-zookeeper watch; the reads after the first carry no watch flag;
// one change wakes every set; a set closed and opened again sets nothing
// new; after a reconnection the watch still fires.
func TestWatchSetOneWatch(t *testing.T) {
	testutil.RequireHooks(t)
	e := ensemble(t)
	admin := connect(t, e.Addrs())
	link, err := e.NewLink("watchset")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s, counter := testutil.CountedSession(t, link.Addrs())
	p := cleanPath(t, admin)
	a := p + "/a"
	mustCreate(t, admin, a, "a")
	ctx := context.Background()
	sets := []*recipes.WatchSet{newWatchSet(t, s), newWatchSet(t, s), newWatchSet(t, s)}
	for range 20 {
		for _, w := range sets {
			if _, _, err := w.GetData(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := zkWatchers(t, s.Conn(), a); got != 1 {
		t.Fatalf("%d go-zookeeper watches after 60 reads, want 1", got)
	}
	if armed, flights, n := hooks.FanStats(s); armed != 1 || flights != 0 || n != 3 {
		t.Fatalf("registry: %d armed, %d in flight, %d sets; want 1, 0, 3", armed, flights, n)
	}
	sets[2].Close()
	again := newWatchSet(t, s)
	if _, _, err := again.GetData(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got := zkWatchers(t, s.Conn(), a); got != 1 {
		t.Fatalf("%d go-zookeeper watches after a set was closed and another read, want 1", got)
	}

	if err := link.Cut(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "suspended", func() bool { return s.State() == recipes.StateSuspended })
	_, _ = admin.Conn().Set(a, []byte("changed while cut"), -1)
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	// go-zookeeper restores the watch; the server fires it for the change.
	for _, w := range []*recipes.WatchSet{sets[0], sets[1], again} {
		if evs := nextEvents(t, w); len(evs) != 1 || evs[0].Type != zk.EventNodeDataChanged {
			t.Fatalf("after the reconnection: %v", evs)
		}
	}
	if evs := sets[2].Events(); evs != nil {
		t.Fatalf("a closed set got %v", evs)
	}
	if armed, _, _ := hooks.FanStats(s); armed != 0 {
		t.Fatalf("%d armed after the event, want 0", armed)
	}
	before := counter.Snapshot()
	if _, _, err := sets[0].GetData(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sets[1].GetData(ctx, a); err != nil {
		t.Fatal(err)
	}
	if d := counter.Snapshot().Sub(before); d.Req(zkcount.OpGetData) != 2 {
		t.Fatalf("reads: %v", d.Requests)
	}
	if got := zkWatchers(t, s.Conn(), a); got != 1 {
		t.Fatalf("%d go-zookeeper watches, want 1", got)
	}
}

// TestWatchSetExpiry: when the session expires, every set learns it
// (EventNotWatching for the paths it relied on) and the registry forgets
// the old session's watches; reads set them again on the new session.
func TestWatchSetExpiry(t *testing.T) {
	testutil.RequireHooks(t)
	e := ensemble(t)
	admin := connect(t, e.Addrs())
	link, err := e.NewLink("watchset-expiry")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s := connect(t, link.Addrs())
	p := cleanPath(t, admin)
	a := p + "/a"
	mustCreate(t, admin, a, "a")
	ctx := context.Background()
	w := newWatchSet(t, s)
	if _, _, err := w.GetData(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.Children(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := link.ExpireSession(testutil.Ctx(t, time.Minute), s.ID()); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for len(seen) < 2 {
		for _, ev := range nextEvents(t, w) {
			if ev.Type != zk.EventNotWatching {
				t.Fatalf("event %v, want EventNotWatching", ev)
			}
			seen[ev.Path] = true
		}
	}
	if armed, _, _ := hooks.FanStats(s); armed != 0 {
		t.Fatalf("%d watches of the lost session armed", armed)
	}
	waitFor(t, 20*time.Second, "a new session", func() bool { return s.State() == recipes.StateConnected })
	if _, _, err := w.GetData(ctx, a); err != nil {
		t.Fatal(err)
	}
	_, _ = admin.Conn().Set(a, []byte("after"), -1)
	if evs := nextEvents(t, w); len(evs) != 1 || evs[0].Type != zk.EventNodeDataChanged {
		t.Fatalf("after the new read: %v", evs)
	}
}

// TestWatchSetBadInput: a done ctx sends nothing; a bad path, a closed set
// and a closed session are refused.
func TestWatchSetBadInput(t *testing.T) {
	e := ensemble(t)
	s, counter := testutil.CountedSession(t, e.Addrs())
	w := newWatchSet(t, s)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	before := counter.Snapshot()
	if _, _, err := w.GetData(done, "/"); !errors.Is(err, context.Canceled) {
		t.Fatalf("GetData with a done ctx: %v", err)
	}
	if _, _, err := w.Children(done, "/"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Children with a done ctx: %v", err)
	}
	if _, _, err := w.Exists(done, "/"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Exists with a done ctx: %v", err)
	}
	if _, _, err := w.GetData(context.Background(), "bad/path"); !errors.Is(err, recipes.ErrInvalidPath) {
		t.Fatalf("GetData of a bad path: %v", err)
	}
	if d := counter.Snapshot().Sub(before); d.Total() != 0 {
		t.Fatalf("sent %v", d.Requests)
	}
	w.Close()
	w.Close()
	if _, _, err := w.GetData(context.Background(), "/"); !errors.Is(err, recipes.ErrBadArgument) {
		t.Fatalf("GetData on a closed set: %v", err)
	}
	var nilSession *recipes.Session
	if _, err := nilSession.NewWatchSet(); !errors.Is(err, recipes.ErrNilSession) {
		t.Fatalf("NewWatchSet on a nil session: %v", err)
	}
	testutil.CloseSession(t, s)
	if _, err := s.NewWatchSet(); !errors.Is(err, recipes.ErrClosed) {
		t.Fatalf("NewWatchSet on a closed session: %v", err)
	}
}
