package lock_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
	sharedrecipe "github.com/zkrecipes/zkrecipes/shared"
)

// acquired runs f in the background and returns its result's channel.
func acquired[T any](f func() (T, error)) <-chan result[T] {
	ch := make(chan result[T], 1)
	go func() {
		v, err := f()
		ch <- result[T]{v, err}
	}()
	return ch
}

type result[T any] struct {
	v   T
	err error
}

// pending fails the test if ch has delivered.
func pending[T any](t *testing.T, what string, ch <-chan result[T]) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("%s returned early: %v, %v", what, r.v, r.err)
	default:
	}
}

// get waits for ch's result and fails the test on an error.
func get[T any](t *testing.T, what string, ch <-chan result[T]) T {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("%s: %v", what, r.err)
		}
		return r.v
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no result in 30 s", what)
	}
	panic("unreachable")
}

// leaseNodes returns the children of path/leases.
func leaseNodes(t *testing.T, s *recipes.Session, path string) []string {
	t.Helper()
	return rawChildren(t, s, path+"/leases")
}

// TestSemaphoreAcquireN: AcquireN takes its leases all or nothing, under
// one mutex holding, so a waiter for 2 is not overtaken by one for 1, and
// gets both at the same moment; leases acquired together are released one
// by one or together; a cancelled AcquireN leaves none of its nodes; a
// quantity out of range sends nothing.
func TestSemaphoreAcquireN(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sa := connect(t, e.Addrs())
	a, b, c := newSemaphore(t, sa, path, 3), newSemaphore(t, connect(t, e.Addrs()), path, 3), newSemaphore(t, connect(t, e.Addrs()), path, 3)

	for _, qty := range []int{0, -1, 4} {
		if ls, err := a.AcquireN(ctx, qty); !errors.Is(err, lock.ErrPermits) || !errors.Is(err, recipes.ErrBadArgument) || ls != nil {
			t.Fatalf("AcquireN(%d) = %v, %v; want ErrPermits", qty, ls, err)
		}
	}
	if ok, _, _ := admin.Conn().Exists(path); ok {
		t.Fatal("a refused AcquireN made nodes")
	}

	as, err := a.AcquireN(ctx, 2)
	if err != nil || len(as) != 2 {
		t.Fatalf("AcquireN(2) = %v, %v", as, err)
	}
	for _, l := range as {
		alive(t, "AcquireN", l.Context(), l.Fence(), sa)
	}
	bDone := acquired(func() (lock.Permits, error) { return b.AcquireN(ctx, 2) })
	waitFor(t, 10*time.Second, "b's 2 leases pending", func() bool { return len(leaseNodes(t, admin, path)) == 4 })
	cDone := acquired(func() (*lock.Permit, error) { return c.Acquire(ctx) })
	waitFor(t, 10*time.Second, "c queued on the mutex", func() bool { return len(rawChildren(t, admin, path+"/locks")) == 2 })
	// One lease is free, but c is behind b in line.
	if n := len(leaseNodes(t, admin, path)); n != 4 {
		t.Fatalf("%d lease nodes, want a's 2 and b's 2 pending", n)
	}
	pending(t, "c.Acquire", cDone)
	pending(t, "b.AcquireN", bDone)

	// Released one by one: the first release lets b have both of its.
	if err := as[0].Release(ctx); err != nil {
		t.Fatal(err)
	}
	bs := get(t, "b.AcquireN", bDone)
	if len(bs) != 2 {
		t.Fatalf("b has %d leases", len(bs))
	}
	// 3 held (a's one, b's two), c waits with its lease pending.
	waitFor(t, 10*time.Second, "c's lease pending", func() bool { return len(leaseNodes(t, admin, path)) == 4 })
	pending(t, "c.Acquire", cDone)
	if err := as.Release(ctx); !errors.Is(err, recipes.ErrReleased) || !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("Permits.Release with one released before = %v, want ErrNotHeld", err)
	}
	cl := get(t, "c.Acquire", cDone)
	if err := bs.Release(ctx); err != nil {
		t.Fatalf("Permits.Release = %v", err)
	}

	// c holds 1: a waiter for 3 gives up all of its nodes when cancelled.
	wctx, wcancel := context.WithCancel(ctx)
	wDone := acquired(func() (lock.Permits, error) { return a.AcquireN(wctx, 3) })
	waitFor(t, 10*time.Second, "3 leases pending", func() bool { return len(leaseNodes(t, admin, path)) == 4 })
	wcancel()
	if r := <-wDone; !errors.Is(r.err, context.Canceled) || r.v != nil {
		t.Fatalf("cancelled AcquireN = %v, %v", r.v, r.err)
	}
	if got := leaseNodes(t, admin, path); len(got) != 1 {
		t.Fatalf("lease nodes after the cancel: %v, want c's only", got)
	}
	waitFor(t, 10*time.Second, "the mutex released", func() bool { return len(rawChildren(t, admin, path+"/locks")) == 0 })
	if err := cl.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestSemaphoreParticipants: the leases with their holders' data and
// sessions, in creation order, the waiting acquirer's last.
func TestSemaphoreParticipants(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var sessions []*recipes.Session
	var sems []*lock.Semaphore
	for _, who := range []string{"alpha", "beta", "gamma"} {
		s := connect(t, e.Addrs())
		sessions = append(sessions, s)
		sems = append(sems, newSemaphore(t, s, path, 2, lock.WithData([]byte(who))))
	}
	if ps, err := sems[0].Participants(ctx); err != nil || len(ps) != 0 {
		t.Fatalf("Participants before any lease = %v, %v", ps, err)
	}
	var leases []*lock.Permit
	for _, sem := range sems[:2] {
		l, err := sem.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, l)
	}
	waiting := acquired(func() (*lock.Permit, error) { return sems[2].Acquire(ctx) })
	var ps []lock.Participant
	waitFor(t, 10*time.Second, "3 participants", func() bool {
		var err error
		ps, err = sems[0].Participants(ctx)
		return err == nil && len(ps) == 3
	})
	for i, want := range []string{"alpha", "beta", "gamma"} {
		if string(ps[i].Data) != want || ps[i].SessionID != sessions[i].ID() {
			t.Fatalf("participant %d = %s %q 0x%x, want %q of 0x%x", i, ps[i].Node, ps[i].Data, ps[i].SessionID, want, sessions[i].ID())
		}
	}
	if ps[0].Node != leases[0].Node() || ps[1].Node != leases[1].Node() {
		t.Fatalf("participants %v, leases %s %s", ps, leases[0].Node(), leases[1].Node())
	}
	if err := leases[0].Release(ctx); err != nil {
		t.Fatal(err)
	}
	l := get(t, "the waiter", waiting)
	if ps, err := sems[1].Participants(ctx); err != nil || len(ps) != 2 || ps[1].Node != l.Node() {
		t.Fatalf("Participants after a release = %v, %v", ps, err)
	}
	for _, l := range []*lock.Permit{leases[1], l} {
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSemaphoreRecordedMax: the first fixed-n Semaphore records its n in
// the leases node's data; a peer with another n is refused with
// ErrMaxMismatch (Acquire and TryAcquire alike) while leases are held under
// the record, leaving none of its nodes; once none is held, the peer's n
// replaces the record, and the first is refused in turn. A count-based
// Semaphore neither checks nor writes the record.
func TestSemaphoreRecordedMax(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	two, three := newSemaphore(t, connect(t, e.Addrs()), path, 2), newSemaphore(t, connect(t, e.Addrs()), path, 3)
	record := func() string {
		t.Helper()
		data, _, err := admin.Conn().Get(path + "/leases")
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	refused := func(what string, err error, want int) {
		t.Helper()
		if !errors.Is(err, lock.ErrMaxMismatch) || !errors.Is(err, recipes.ErrBadArgument) {
			t.Fatalf("%s = %v, want ErrMaxMismatch", what, err)
		}
		if n := len(leaseNodes(t, admin, path)); n != want {
			t.Fatalf("%s left %d lease nodes, want %d", what, n, want)
		}
		waitFor(t, 10*time.Second, "the mutex released", func() bool { return len(rawChildren(t, admin, path+"/locks")) == 0 })
	}
	l2, err := two.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := record(); got != "2" {
		t.Fatalf("record %q, want \"2\"", got)
	}
	_, err = three.Acquire(ctx)
	refused("Acquire with n=3 beside n=2", err, 1)
	_, err = three.TryAcquire(ctx)
	refused("TryAcquire with n=3 beside n=2", err, 1)
	if got := record(); got != "2" {
		t.Fatalf("record %q after the refusals, want \"2\"", got)
	}
	// Another n=2 Semaphore joins.
	other, err := newSemaphore(t, connect(t, e.Addrs()), path, 2).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []*lock.Permit{l2, other} {
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Nobody holds: n=3 takes over the record.
	l3, err := three.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := record(); got != "3" {
		t.Fatalf("record %q, want \"3\"", got)
	}
	_, err = two.Acquire(ctx)
	refused("Acquire with n=2 beside n=3", err, 1)

	// Count-based: not refused, writes nothing.
	cpath := path + "-max"
	count, err := sharedrecipe.NewCount(admin, cpath, 5)
	if err != nil {
		t.Fatal(err)
	}
	csem, err := lock.NewSemaphoreCount(connect(t, e.Addrs()), path, count)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := csem.Acquire(ctx)
	if err != nil {
		t.Fatalf("count-based Acquire beside a recorded 3 = %v", err)
	}
	if got := record(); got != "3" {
		t.Fatalf("record %q after a count-based lease, want \"3\"", got)
	}
	for _, l := range []*lock.Permit{l3, cl} {
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSemaphoreCount: the maximum follows a shared count. A waiter is
// granted as soon as the count grows; lowering the count revokes no holder
// but grants no lease until the holders are fewer than it; a count of 0
// grants nothing; a missing count node is created with the seed.
func TestSemaphoreCount(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cpath := path + "-config/max"
	setter, err := sharedrecipe.NewCount(admin, cpath, 1)
	if err != nil {
		t.Fatal(err)
	}
	var counter *zkcount.Counter // c's
	sem := func() *lock.Semaphore {
		s, cs := countedSession(t, e.Addrs())
		counter = cs
		c, err := sharedrecipe.NewCount(s, cpath, 1)
		if err != nil {
			t.Fatal(err)
		}
		sem, err := lock.NewSemaphoreCount(s, path, c)
		if err != nil {
			t.Fatal(err)
		}
		return sem
	}
	a, b, c := sem(), sem(), sem()
	la, err := a.Acquire(ctx) // the count node is created with the seed, 1
	if err != nil {
		t.Fatal(err)
	}
	if v, err := setter.Get(ctx); err != nil || v.Value != 1 {
		t.Fatalf("count = %+v, %v; want the seed 1", v, err)
	}
	bDone := acquired(func() (*lock.Permit, error) { return b.Acquire(ctx) })
	waitFor(t, 10*time.Second, "b pending", func() bool { return len(leaseNodes(t, admin, path)) == 2 })
	pending(t, "b.Acquire", bDone)
	if _, err := setter.Set(ctx, 2); err != nil {
		t.Fatal(err)
	}
	lb := get(t, "b.Acquire after the count grew to 2", bDone)

	// Lowered to 1 with 2 holders: both keep their leases; c waits.
	if _, err := setter.Set(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TryAcquire(ctx); !errors.Is(err, lock.ErrNoPermit) {
		t.Fatalf("TryAcquire with 2 held of 1 = %v, want ErrNoPermit", err)
	}
	cDone := acquired(func() (*lock.Permit, error) { return c.Acquire(ctx) })
	waitFor(t, 10*time.Second, "c pending", func() bool { return len(leaseNodes(t, admin, path)) == 3 })
	for _, l := range []*lock.Permit{la, lb} {
		if err := l.Context().Err(); err != nil {
			t.Fatalf("a holder lost its lease when the count was lowered: %v", context.Cause(l.Context()))
		}
	}
	// reevaluated waits until c, woken by what trigger does, has listed the
	// leases and read the count again and had both answers.
	reevaluated := func(what string, trigger func()) {
		t.Helper()
		before := counter.Snapshot()
		trigger()
		waitFor(t, 10*time.Second, what, func() bool {
			d := counter.Snapshot().Sub(before)
			return d.Req(zkcount.OpGetChildren2) >= 1 && d.Req(zkcount.OpGetData) >= 1 && d.Replies >= 2
		})
	}
	reevaluated("c woken by a's release", func() {
		if err := la.Release(ctx); err != nil {
			t.Fatal(err)
		}
	})
	pending(t, "c.Acquire with 1 held of 1", cDone)
	// Count 0: nothing granted even when b leaves.
	if _, err := setter.Set(ctx, 0); err != nil {
		t.Fatal(err)
	}
	reevaluated("c woken by b's release", func() {
		if err := lb.Release(ctx); err != nil {
			t.Fatal(err)
		}
	})
	pending(t, "c.Acquire with a count of 0", cDone)
	if _, err := setter.Set(ctx, 1); err != nil {
		t.Fatal(err)
	}
	lc := get(t, "c.Acquire after the count went back to 1", cDone)
	if data, _, err := admin.Conn().Get(path + "/leases"); err != nil || len(data) != 0 {
		t.Fatalf("leases node data %q, %v: a count-based semaphore records nothing", data, err)
	}
	if err := lc.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestSemaphoreCountChangedWhileDisconnected: a change of the count made
// while an acquirer was cut off is honoured when it is back: lowered, it
// refuses a lease it would have granted before; raised again, it grants.
func TestSemaphoreCountChangedWhileDisconnected(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cpath := path + "-max"
	setter, err := sharedrecipe.NewCount(admin, cpath, 2)
	if err != nil {
		t.Fatal(err)
	}
	holder, err := lock.NewSemaphoreCount(admin, path, setter)
	if err != nil {
		t.Fatal(err)
	}
	held, err := holder.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	link, err := e.NewLink("semaphore-count-cut")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s := connect(t, link.Addrs())
	count, err := sharedrecipe.NewCount(s, cpath, 2)
	if err != nil {
		t.Fatal(err)
	}
	sem, err := lock.NewSemaphoreCount(s, path, count)
	if err != nil {
		t.Fatal(err)
	}
	// Seen once at 2, with a watch on it (as a cache would keep one).
	stream := count.Watch(ctx)
	defer stream.Stop()
	if v := <-stream.C; v.Value != 2 {
		t.Fatalf("count %d, want 2", v.Value)
	}
	if err := cutUntilSuspended(link, s)(); err != nil {
		t.Fatal(err)
	}
	if _, err := setter.Set(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "reconnected", func() bool { return s.State() == recipes.StateReconnected })
	if _, err := sem.TryAcquire(ctx); !errors.Is(err, lock.ErrNoPermit) {
		t.Fatalf("TryAcquire after the count was lowered to 1 while cut off = %v, want ErrNoPermit", err)
	}
	done := acquired(func() (*lock.Permit, error) { return sem.Acquire(ctx) })
	waitFor(t, 10*time.Second, "pending", func() bool { return len(leaseNodes(t, admin, path)) == 2 })
	pending(t, "Acquire with 1 held of 1", done)
	if _, err := setter.Set(ctx, 2); err != nil {
		t.Fatal(err)
	}
	l := get(t, "Acquire after the count went back to 2", done)
	alive(t, "Acquire", l.Context(), l.Fence(), s)
	for _, l := range []*lock.Permit{held, l} {
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSemaphoreBadCount: a count node that does not hold 4 bytes fails the
// acquisition with ErrBadCount, leaving no node behind.
func TestSemaphoreBadCount(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cpath := path + "-max"
	ensurePath(t, admin, cpath, []byte(strconv.Itoa(3)))
	count, err := sharedrecipe.NewCount(admin, cpath, 3)
	if err != nil {
		t.Fatal(err)
	}
	sem, err := lock.NewSemaphoreCount(connect(t, e.Addrs()), path, count)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sem.Acquire(ctx); !errors.Is(err, lock.ErrBadCount) {
		t.Fatalf("Acquire = %v, want ErrBadCount", err)
	}
	if _, err := sem.TryAcquire(ctx); !errors.Is(err, lock.ErrBadCount) {
		t.Fatalf("TryAcquire = %v, want ErrBadCount", err)
	}
	if got := leaseNodes(t, admin, path); len(got) != 0 {
		t.Fatalf("lease nodes left: %v", got)
	}
	waitFor(t, 10*time.Second, "the mutex released", func() bool { return len(rawChildren(t, admin, path+"/locks")) == 0 })
	if _, err := admin.Conn().Set(cpath, sharedrecipe.EncodeCount(3), -1); err != nil {
		t.Fatal(err)
	}
	l, err := sem.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestSemaphoreRecordCheckedPerLeasesNode guards the Semaphore's promise
// that the recorded maximum is "checked under the mutex, once per Semaphore
// and leases node": when the leases node is gone (a container the server
// removed once empty; here an admin deletes it, as the server would) and a
// peer with another n creates it again, a Semaphore that checked the old
// node must check the new one and refuse, with ErrMaxMismatch, to join the
// leases held under the other maximum, even though the new node's record is
// at the same data version as the one it checked.
func TestSemaphoreRecordCheckedPerLeasesNode(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	two, three := newSemaphore(t, connect(t, e.Addrs()), path, 2), newSemaphore(t, connect(t, e.Addrs()), path, 3)
	l2, err := two.Acquire(ctx) // creates the leases node and records 2: checked by two
	if err != nil {
		t.Fatal(err)
	}
	_, old, err := admin.Conn().Get(path + "/leases")
	if err != nil {
		t.Fatal(err)
	}
	if err := l2.Release(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the mutex released", func() bool { return len(rawChildren(t, admin, path+"/locks")) == 0 })
	if err := admin.Conn().Delete(path+"/leases", -1); err != nil { // empty: what the server does to a container
		t.Fatal(err)
	}
	l3, err := three.Acquire(ctx) // a new leases node, recording 3
	if err != nil {
		t.Fatal(err)
	}
	data, cur, err := admin.Conn().Get(path + "/leases")
	switch {
	case err != nil:
		t.Fatal(err)
	case string(data) != "3" || cur.Czxid == old.Czxid:
		t.Fatalf("leases node after n=3 joined: record %q, czxid %d (old %d); want a new node recording \"3\"", data, cur.Czxid, old.Czxid)
	}
	if _, err := two.Acquire(ctx); !errors.Is(err, lock.ErrMaxMismatch) {
		t.Fatalf("n=2 Acquire beside a lease held under a new leases node recording 3 = %v, want ErrMaxMismatch (old node version %d, new %d)", err, old.Version, cur.Version)
	}
	if n := len(leaseNodes(t, admin, path)); n != 1 {
		t.Fatalf("refused Acquire left %d lease nodes, want 1", n)
	}
	if err := l3.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
