package barrier_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/barrier"
	"github.com/zkrecipes/zkrecipes/recipes"
)

func TestBadInput(t *testing.T) {
	e := ensemble(t)
	s := connect(t, e.Addrs())
	ctx := ctxT(t, time.Minute)

	if _, err := barrier.New(nil, "/b"); !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("New with a nil session: %v", err)
	}
	if _, err := barrier.NewDouble(nil, "/b", 2); !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("NewDouble with a nil session: %v", err)
	}
	var nb *barrier.Barrier
	if err := nb.Wait(ctx); !errors.Is(err, barrier.ErrNilReceiver) {
		t.Errorf("Wait on nil: %v", err)
	}
	var nd *barrier.DoubleBarrier
	if err := nd.Leave(ctx); !errors.Is(err, barrier.ErrNilReceiver) {
		t.Errorf("Leave on nil: %v", err)
	}
	for _, p := range []string{"", "b", "/b/", "/a//b", "/a/./b", "/zookeeper/b", "/", "/a\x01"} {
		if _, err := barrier.New(s, p); !errors.Is(err, recipes.ErrInvalidPath) {
			t.Errorf("New(%q): %v, want ErrInvalidPath", p, err)
		}
		if _, err := barrier.NewDouble(s, p, 2); !errors.Is(err, recipes.ErrInvalidPath) {
			t.Errorf("NewDouble(%q): %v, want ErrInvalidPath", p, err)
		}
	}
	for _, n := range []int{0, -1} {
		_, err := barrier.NewDouble(s, testPath(t), n)
		if !errors.Is(err, barrier.ErrMembers) || !errors.Is(err, recipes.ErrBadArgument) {
			t.Errorf("n = %d: %v", n, err)
		}
	}
	d := newDouble(t, s, testPath(t), 1)
	if err := d.Leave(ctx); !errors.Is(err, barrier.ErrNotEntered) {
		t.Errorf("Leave before Enter: %v", err)
	}
	if got := children(t, s, "/zkrecipes-test/barrier"); len(got) != 0 {
		t.Errorf("bad input wrote %v", got)
	}
}

// TestBarrierFiveWaiters: five waiters, on five sessions, pass only once the
// barrier is removed.
func TestBarrierFiveWaiters(t *testing.T) {
	e := ensemble(t)
	s := connect(t, e.Addrs())
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	b := newBarrier(t, s, path)
	if err := b.Wait(ctx); err != nil {
		t.Fatalf("Wait on an unset barrier: %v", err)
	}
	if err := b.Set(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Set(ctx); err != nil {
		t.Fatalf("second Set: %v", err)
	}
	var removed, passed atomic.Bool
	var waiting, done atomic.Int32
	var wg sync.WaitGroup
	for i := range 5 {
		w := newBarrier(t, connect(t, e.Addrs()), path)
		wg.Go(func() {
			waiting.Add(1)
			err := w.Wait(ctx)
			if err != nil {
				t.Errorf("waiter %d: %v", i, err)
			}
			if !removed.Load() {
				passed.Store(true)
				t.Errorf("waiter %d passed a set barrier", i)
			}
			done.Add(1)
		})
	}
	waitFor(t, 10*time.Second, "5 waiters", func() bool { return waiting.Load() == 5 })
	// A Wait with a deadline on the set barrier times out.
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := b.Wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait with a deadline: %v", err)
	}
	if n := done.Load(); n != 0 {
		t.Fatalf("%d waiters passed before Remove", n)
	}
	removed.Store(true)
	if err := b.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if err := b.Remove(ctx); err != nil {
		t.Fatalf("second Remove: %v", err)
	}
}

// TestDoubleBarrier: 5 members for n = 4. X enters and its session dies
// while it waits (it drops out: the barrier stays closed with 3 live
// members); M1..M4 enter and pass together; M4's session dies after
// entering, and the others' Leave does not wait for it.
func TestDoubleBarrier(t *testing.T) {
	const n = 4
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	path := testPath(t)
	obs := connect(t, e.Addrs())
	members := func() []string {
		var out []string
		for _, c := range children(t, obs, path) {
			if c != barrier.ReadyNode {
				out = append(out, c)
			}
		}
		return out
	}

	newMember := func(private string) (*barrier.DoubleBarrier, *recipes.Session, func() error) {
		addrs := e.Addrs()
		var expire func() error
		if private != "" {
			l, err := e.NewLink(private)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = l.Close() })
			addrs = l.Addrs()
			var s *recipes.Session
			expire = func() error { return l.ExpireSession(ctx, s.ID()) }
			s = connect(t, addrs)
			return newDouble(t, s, path, n), s, expire
		}
		s := connect(t, addrs)
		return newDouble(t, s, path, n), s, nil
	}

	var entered atomic.Int32
	type result struct {
		who string
		err error
	}
	enterDone := make(chan result, 5)
	enter := func(who string, d *barrier.DoubleBarrier) {
		go func() {
			err := d.Enter(ctx)
			if err == nil {
				entered.Add(1)
				if got := len(members()); got < n-1 { // M4 may already be gone
					t.Errorf("%s passed Enter with %d members", who, got)
				}
			}
			enterDone <- result{who, err}
		}()
	}

	m1, _, _ := newMember("")
	m2, _, _ := newMember("")
	x, _, expireX := newMember("x")
	enter("m1", m1)
	enter("m2", m2)
	enter("x", x)
	// x's Enter has its node (Name is set once the create's reply came
	// back): a create whose reply the expiry swallowed would be made again
	// under the new session, and x would enter as a new member.
	waitFor(t, 10*time.Second, "3 members", func() bool { return len(members()) == 3 && x.Name() != "" })
	if err := expireX(); err != nil {
		t.Fatal(err)
	}
	r := <-enterDone
	if r.who != "x" || !errors.Is(r.err, barrier.ErrMemberLost) || !errors.Is(r.err, recipes.ErrSessionLost) {
		t.Fatalf("the expired member's Enter: %s %v", r.who, r.err)
	}
	waitFor(t, 10*time.Second, "x's node to vanish", func() bool { return len(members()) == 2 })

	m3, _, _ := newMember("")
	enter("m3", m3)
	waitFor(t, 10*time.Second, "3 live members", func() bool { return len(members()) == 3 })
	if got := entered.Load(); got != 0 {
		t.Fatalf("%d members passed Enter with 3 of %d in", got, n)
	}
	if slices.Contains(children(t, obs, path), barrier.ReadyNode) {
		t.Fatal("ready exists with 3 of 4 members")
	}

	m4, s4, expire4 := newMember("m4")
	enter("m4", m4)
	for range n {
		if r := <-enterDone; r.err != nil {
			t.Fatalf("%s: Enter: %v", r.who, r.err)
		}
	}
	if err := m1.Enter(ctx); !errors.Is(err, barrier.ErrAlreadyEntered) {
		t.Fatalf("second Enter: %v", err)
	}

	// M4 dies after entering; the others leave without waiting for it.
	sid4 := s4.ID()
	if err := expire4(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i, d := range []*barrier.DoubleBarrier{m1, m2, m3} {
		wg.Go(func() {
			if err := d.Leave(ctx); err != nil {
				t.Errorf("m%d: Leave: %v", i+1, err)
			}
		})
	}
	wg.Wait()
	waitFor(t, 10*time.Second, "m4's new session", func() bool { id := s4.ID(); return id != 0 && id != sid4 })
	if err := m4.Leave(ctx); !errors.Is(err, barrier.ErrMemberLost) {
		t.Fatalf("Leave of the expired member: %v", err)
	}
	if got := children(t, obs, path); len(got) != 0 {
		t.Fatalf("left behind: %v", got)
	}
	// The barrier can be used again.
	again := newDouble(t, obs, path, 1)
	if err := again.Enter(ctx); err != nil {
		t.Fatal(err)
	}
	if err := again.Leave(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestDoubleBarrierLeaveOrder: members leave one at a time, in a random
// order; nobody's Leave returns before the last member left.
func TestDoubleBarrierLeaveOrder(t *testing.T) {
	const n = 4
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	ds := make([]*barrier.DoubleBarrier, n)
	var wg sync.WaitGroup
	for i := range ds {
		ds[i] = newDouble(t, connect(t, e.Addrs()), path, n, barrier.WithDialect(recipes.Kazoo))
		wg.Go(func() {
			if err := ds[i].Enter(ctx); err != nil {
				t.Errorf("Enter %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, d := range ds {
		if len(d.Name()) != 32 {
			t.Fatalf("kazoo member name %q", d.Name())
		}
	}
	// Every member but the second lowest leaves: the others delete their
	// nodes and wait on the lowest; the lowest waits for the highest left.
	slices.SortFunc(ds, func(a, b *barrier.DoubleBarrier) int { return strings.Compare(a.Name(), b.Name()) })
	var done atomic.Int32
	results := make(chan error, n)
	for i, d := range ds {
		if i == 1 {
			continue
		}
		go func() {
			err := d.Leave(ctx)
			done.Add(1)
			results <- err
		}()
	}
	obs := connect(t, e.Addrs())
	waitFor(t, 10*time.Second, "2 member nodes left", func() bool {
		return len(children(t, obs, path)) == 3 // 2 members + ready
	})
	if got := done.Load(); got != 0 {
		t.Fatalf("%d Leave calls returned while a member had not left", got)
	}
	if err := ds[1].Leave(ctx); err != nil {
		t.Fatal(err)
	}
	for range n - 1 {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
	if got := children(t, obs, path); len(got) != 0 {
		t.Fatalf("left behind: %v", got)
	}
}

func TestDoubleBarrierCancel(t *testing.T) {
	e := ensemble(t)
	s := connect(t, e.Addrs())
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	d := newDouble(t, s, path, 3)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := d.Enter(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Enter with a deadline: %v", err)
	}
	waitFor(t, 10*time.Second, "our node deleted", func() bool { return len(children(t, s, path)) == 0 })
	if err := d.Leave(ctx); !errors.Is(err, barrier.ErrNotEntered) {
		t.Fatalf("Leave after a failed Enter: %v", err)
	}
}
