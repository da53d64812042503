package recipes_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// zkWatchers counts the watch channels go-zookeeper keeps for path (of any
// type). go-zookeeper v1.0.4 appends one channel per GetW/ExistsW/ChildrenW
// to an unexported map and drops them only when an event for the path
// arrives, so this is the memory an abandoned wait leaves behind. It reads
// the map under go-zookeeper's own lock.
func zkWatchers(t *testing.T, c *zk.Conn, path string) int {
	t.Helper()
	v := reflect.ValueOf(c).Elem()
	lock, m := v.FieldByName("watchersLock"), v.FieldByName("watchers")
	if !lock.IsValid() || !m.IsValid() || m.Kind() != reflect.Map {
		t.Fatal("go-zookeeper's Conn has no watchers map (not v1.0.4?)")
	}
	mu := (*sync.Mutex)(unsafe.Pointer(lock.UnsafeAddr()))
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for it := m.MapRange(); it.Next(); {
		if it.Key().Field(0).String() == path {
			n += it.Value().Len()
		}
	}
	return n
}

// serverWatchers counts the sessions server 0 of e has a watch for on
// path (four-letter word wchp, over TLS in secured mode). The server keeps
// one watch per path and connection whatever the client sends, so this
// stays at most one per session; it shows that the client's count is all
// client-side memory.
func serverWatchers(t *testing.T, e *testenv.Ensemble, path string) int {
	t.Helper()
	out, err := e.FourLetter(testutil.Ctx(t, 10*time.Second), 0, "wchp")
	if err != nil {
		t.Fatal(err)
	}
	n, in := 0, false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "/"):
			in = line == path
		case in && strings.TrimSpace(line) != "":
			n++
		}
	}
	return n
}

// TestAbandonedWaitsKeepOneWatch: many waits given up against a holder that
// stays leave at most one go-zookeeper watcher on the holder's node, and the
// holder's release still wakes the waiter that stayed.
func TestAbandonedWaitsKeepOneWatch(t *testing.T) {
	e := ensemble(t)
	ctx := context.Background()
	parent := testPath(t)
	hs, ws := connect(t, e.Addrs()), connect(t, e.Addrs())
	h, err := recipes.Acquire(ctx, hs, recipes.Spec{Path: parent})
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	for i := range n {
		actx, cancel := context.WithTimeout(ctx, 15*time.Millisecond)
		_, err := recipes.Acquire(actx, ws, recipes.Spec{Path: parent})
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("attempt %d: %v, want the deadline", i, err)
		}
	}
	got := zkWatchers(t, ws.Conn(), h.Path())
	t.Logf("after %d abandoned waits: %d go-zookeeper watchers on the holder's node, %d on the server",
		n, got, serverWatchers(t, e, h.Path()))
	if got > 1 {
		t.Fatalf("%d abandoned waits left %d go-zookeeper watchers on %s, want at most 1", n, got, h.Path())
	}

	// The waiter that stays is woken by the release.
	type result struct {
		h   *recipes.Holding
		err error
	}
	done := make(chan result, 1)
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	go func() {
		w, err := recipes.Acquire(wctx, ws, recipes.Spec{Path: parent})
		done <- result{w, err}
	}()
	waitFor(t, 30*time.Second, "the waiter to queue", func() bool { return len(rawChildren(t, hs, parent)) == 2 })
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("waiter after release: %v", r.err)
	}
	if err := r.h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the watchers on the released node to go", func() bool {
		return zkWatchers(t, ws.Conn(), h.Path()) == 0
	})
}

// TestWatchFanOut: many subscribers of one path share one request and one
// go-zookeeper watcher; one event wakes them all; subscribers that leave do
// not take the watch along; a watch dropped by a session expiry is reported
// (EventNotWatching) and set again by the next subscriber.
func TestWatchFanOut(t *testing.T) {
	testutil.RequireHooks(t)
	e := ensemble(t)
	link, err := e.NewLink("fanout")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := connect(t, link.Addrs())
	other := connect(t, e.Addrs())
	path := testPath(t)
	if err := ensure(other, path); err != nil {
		t.Fatal(err)
	}
	node := path + "/n"
	if _, err := other.Conn().Create(node, []byte("v1"), 0, testutil.ACL()); err != nil {
		t.Fatal(err)
	}

	const n = 20
	ws := make([]*recipes.Watch, n)
	for i := range ws {
		data, st, w, err := s.WatchData(ctx, node)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != "v1" || st.Version != 0 {
			t.Fatalf("subscriber %d read %q version %d", i, data, st.Version)
		}
		ws[i] = w
	}
	if got := zkWatchers(t, s.Conn(), node); got != 1 {
		t.Fatalf("%d subscribers: %d go-zookeeper watchers, want 1", n, got)
	}
	if armed, subs := hooks.WatchStats(s); armed != 1 || subs != n {
		t.Fatalf("registry: %d armed, %d subscribers; want 1, %d", armed, subs, n)
	}
	for _, w := range ws[n/2:] {
		w.Close()
		w.Close() // idempotent
	}
	if armed, subs := hooks.WatchStats(s); armed != 1 || subs != n/2 {
		t.Fatalf("after half left: %d armed, %d subscribers; want 1, %d", armed, subs, n/2)
	}
	if _, err := other.Conn().Set(node, []byte("v2"), -1); err != nil {
		t.Fatal(err)
	}
	for i, w := range ws { // those that left are woken too: the channel is shared
		select {
		case <-w.Fired():
		case <-ctx.Done():
			t.Fatalf("subscriber %d not woken", i)
		}
		if ev := w.Event(); ev.Type != zk.EventNodeDataChanged || ev.Path != node {
			t.Fatalf("subscriber %d saw %+v", i, ev)
		}
		w.Close()
	}
	waitFor(t, 10*time.Second, "the fired watch to leave the registry", func() bool {
		armed, _ := hooks.WatchStats(s)
		return armed == 0
	})

	// A missing node: no watch, zk.ErrNoNode.
	if _, _, _, err := s.WatchData(ctx, path+"/missing"); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("WatchData of a missing node: %v, want zk.ErrNoNode", err)
	}
	// A done ctx sends nothing.
	dctx, dcancel := context.WithCancel(ctx)
	dcancel()
	if _, _, _, err := s.WatchData(dctx, node); !errors.Is(err, context.Canceled) {
		t.Fatalf("WatchData with a done ctx: %v", err)
	}

	// Dropped by expiry: the event says so, and the next subscriber sets
	// the watch again under the new session.
	data, _, w, err := s.WatchData(ctx, node)
	if err != nil || string(data) != "v2" {
		t.Fatalf("WatchData: %q %v", data, err)
	}
	defer w.Close()
	old := s.ID()
	if err := link.ExpireSession(ctx, old); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.Fired():
	case <-ctx.Done():
		t.Fatal("watch not dropped by the expiry")
	}
	if ev := w.Event(); ev.Type != zk.EventNotWatching {
		t.Fatalf("after expiry: %+v, want EventNotWatching", ev)
	}
	waitFor(t, 30*time.Second, "a new session", func() bool { id := s.ID(); return id != 0 && id != old })
	var w2 *recipes.Watch
	waitFor(t, 30*time.Second, "the watch to be set again", func() bool {
		_, _, w2, err = s.WatchData(ctx, node)
		return err == nil
	})
	defer w2.Close()
	if err := other.Conn().Delete(node, -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w2.Fired():
	case <-ctx.Done():
		t.Fatal("re-armed watch not fired by the delete")
	}
	if ev := w2.Event(); ev.Type != zk.EventNodeDeleted {
		t.Fatalf("after delete: %+v", ev)
	}
}

// ensure creates path and its parents as persistent nodes.
func ensure(s *recipes.Session, path string) error {
	p := ""
	for _, seg := range strings.Split(path[1:], "/") {
		p += "/" + seg
		if _, err := s.Conn().Create(p, nil, 0, testutil.ACL()); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}
