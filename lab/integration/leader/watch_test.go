package leader_test

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
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/leader"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// zkWatchers counts the watch channels go-zookeeper (v1.0.4) keeps for path,
// read under its own lock: one per GetW/ExistsW/ChildrenW not yet fired.
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

// TestAbandonedCampaignsKeepOneWatch: 200 Campaigns given up against a
// leader that stays leave at most one go-zookeeper watcher on the leader's
// node; the leader's resignation still elects the participant that stayed.
func TestAbandonedCampaignsKeepOneWatch(t *testing.T) {
	e := shared(t)
	path := testPath(t)
	ps := newParticipants(t, 2, e.Addrs(), path)
	ctx := ctxT(t, 2*time.Minute)
	term, err := ps[0].el.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	for i := range n {
		actx, cancel := context.WithTimeout(ctx, 15*time.Millisecond)
		_, err := ps[1].el.Campaign(actx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("campaign %d: %v, want the deadline", i, err)
		}
	}
	if got := zkWatchers(t, ps[1].s.Conn(), term.Fence().Path); got > 1 {
		t.Fatalf("%d abandoned campaigns left %d go-zookeeper watchers on the leader's node, want at most 1", n, got)
	}
	done := make(chan error, 1)
	go func() {
		t2, err := ps[1].el.Campaign(ctx)
		if err == nil {
			err = t2.Release(ctx)
		}
		done <- err
	}()
	waitFor(t, 30*time.Second, "the second participant to queue", func() bool {
		got, err := ps[0].el.Participants(ctx)
		return err == nil && len(got) == 2
	})
	if err := term.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the participant that stayed: %v", err)
	}
}

// TestAbandonedObservesKeepOneWatch: Watch calls given up while the leader
// stays leave at most one go-zookeeper watcher on the leader's node, and
// Watch calls on an empty election at most one on the path.
func TestAbandonedObservesKeepOneWatch(t *testing.T) {
	e := shared(t)
	path := testPath(t)
	ps := newParticipants(t, 2, e.Addrs(), path)
	ctx := ctxT(t, 2*time.Minute)
	observe := func(want func(leader.Participant) bool) {
		t.Helper()
		octx, cancel := context.WithCancel(ctx)
		ch := ps[1].el.Watch(octx).C
		select {
		case p := <-ch:
			if !want(p) {
				t.Fatalf("Watch's first value: %+v", p)
			}
		case <-ctx.Done():
			t.Fatal("Watch sent nothing")
		}
		cancel()
		for range ch { // closed once Watch's goroutines end
		}
	}
	const n = 50
	for range n {
		observe(leader.Participant.IsZero)
	}
	if got := zkWatchers(t, ps[1].s.Conn(), path); got > 2 {
		t.Fatalf("%d abandoned Observes of an empty election left %d go-zookeeper watchers on its path, want at most 2", n, got)
	}
	term, err := ps[0].el.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Release(ctx) //nolint:errcheck
	for range n {
		observe(func(p leader.Participant) bool { return p.Node == term.Fence().Path })
	}
	if got := zkWatchers(t, ps[1].s.Conn(), term.Fence().Path); got > 1 {
		t.Fatalf("%d abandoned Observes left %d go-zookeeper watchers on the leader's node, want at most 1", n, got)
	}
}

// TestObserveClosesWithSession: Watch's channel is closed when the session
// is closed while it waits on the leader's node, and Err says so (as its doc
// says).
func TestObserveClosesWithSession(t *testing.T) {
	e := shared(t)
	path := testPath(t)
	ps := newParticipants(t, 2, e.Addrs(), path)
	ctx := ctxT(t, time.Minute)
	term, err := ps[0].el.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Release(ctx) //nolint:errcheck
	obs := ps[1].el.Watch(ctx)
	ch := obs.C
	if p := <-ch; p.Node != term.Fence().Path {
		t.Fatalf("first value %+v", p)
	}
	if err := ps[1].s.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "Watch's channel to close", func() bool {
		select {
		case _, ok := <-ch:
			return !ok
		default:
			return false
		}
	})
	if err := obs.Err(); !errors.Is(err, recipes.ErrClosed) {
		t.Fatalf("Err after the session closed = %v, want ErrClosed", err)
	}
}

// observeGoroutine matches the goroutines an Watch runs: the stream's
// (delivering to the reader) and the one following the head of the line.
func observeGoroutine(stack string) bool {
	return strings.Contains(stack, "zkrecipes/leader.(*Election).watchHead") ||
		strings.Contains(stack, "zkrecipes/leader.(*mailbox).deliver") ||
		strings.Contains(stack, "zkrecipes/recipes.StartStream")
}

// TestObserveStopWhileBlocked: a reader that stops reading while a change
// is waiting to be delivered (the producer blocked on its send) calls Stop:
// both of Watch's goroutines end, nothing more is delivered, C is closed
// and Err is nil (the reader stopped).
func TestObserveStopWhileBlocked(t *testing.T) {
	e := shared(t)
	path := testPath(t)
	ps := newParticipants(t, 2, e.Addrs(), path)
	ctx := ctxT(t, time.Minute)
	term, err := ps[0].el.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	obs := ps[1].el.Watch(ctx)
	if p := <-obs.C; p.Node != term.Fence().Path {
		t.Fatalf("first value %+v", p)
	}
	// A change nobody reads: the observer lists the path again (1
	// getChildren) and, nobody leading, arms a child watch (1 more): the
	// new value is then waiting on C.
	before := ps[1].c.Snapshot()
	if err := term.Release(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the observer to see the change", func() bool {
		return ps[1].c.Snapshot().Sub(before).Req(zkcount.OpGetChildren2) >= 2
	})
	if n := len(testutil.Goroutines(observeGoroutine)); n != 2 {
		t.Fatalf("%d Watch goroutines before Stop, want 2", n)
	}
	obs.Stop()
	if left := testutil.Settle(10*time.Second, observeGoroutine); len(left) > 0 {
		t.Fatalf("%d Watch goroutines left after Stop:\n%s", len(left), strings.Join(left, "\n\n"))
	}
	if p, ok := <-obs.C; ok {
		t.Fatalf("delivered %+v after Stop", p)
	}
	if err := obs.Err(); err != nil {
		t.Fatalf("Err after Stop = %v, want nil", err)
	}
}
