package partition_test

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/partition"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// noOverlap fails the test if two members ever believed they held one item
// at once, or an item's tokens did not grow from holder to holder.
func noOverlap(tb testing.TB, l *ledger) {
	tb.Helper()
	for _, o := range l.overlaps() {
		tb.Error(o)
	}
}

// TestAllocation: members that join together split the set as kazoo's
// Stride does, each item in exactly one Partition, each item's lock held
// by its owner's session alone; the members are Curator GroupMember
// nodes named by id.
func TestAllocation(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	items := itemsN(7)
	l := newLedger()
	var ms []*member
	for _, id := range []string{"w-b", "w-a", "w-c"} {
		ms = append(ms, start(t, ctx, connect(t, e.Addrs()), l, path, id, items))
	}
	waitConverged(t, admin, path, ms, items)
	party := children(t, admin, path+"/party")
	slices.Sort(party)
	if !slices.Equal(party, []string{"w-a", "w-b", "w-c"}) {
		t.Errorf("party %v", party)
	}
	if got := ms[1].held().Items(); !slices.Equal(got, []string{"item-0", "item-3", "item-6"}) {
		t.Errorf("w-a's share %v", got)
	}
	noOverlap(t, l)
}

// TestRebalanceOnJoin: a member joining ends every Partition with
// ErrRebalance; once released, the set is split among all.
func TestRebalanceOnJoin(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	items := itemsN(6)
	l := newLedger()
	a := start(t, ctx, connect(t, e.Addrs()), l, path, "a", items)
	b := start(t, ctx, connect(t, e.Addrs()), l, path, "b", items)
	waitConverged(t, admin, path, []*member{a, b}, items)
	c := start(t, ctx, connect(t, e.Addrs()), l, path, "c", items)
	waitConverged(t, admin, path, []*member{a, b, c}, items)
	for _, m := range []*member{a, b} {
		m.mu.Lock()
		if len(m.causes) == 0 || !errors.Is(m.causes[len(m.causes)-1], partition.ErrRebalance) || !errors.Is(m.causes[len(m.causes)-1], recipes.ErrRevoked) {
			t.Errorf("%s: causes %v, want the last ErrRebalance", m.id, m.causes)
		}
		m.mu.Unlock()
	}
	noOverlap(t, l)
}

// TestRebalanceOnLeave: a member whose stream ends (Stop) has its
// Partition ended with ErrStopped and leaves the group; the others split
// the set again.
func TestRebalanceOnLeave(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	items := itemsN(6)
	l := newLedger()
	a := start(t, ctx, connect(t, e.Addrs()), l, path, "a", items)
	b := start(t, ctx, connect(t, e.Addrs()), l, path, "b", items)
	c := start(t, ctx, connect(t, e.Addrs()), l, path, "c", items)
	waitConverged(t, admin, path, []*member{a, b, c}, items)
	c.stop(t)
	if err := c.st.Err(); err != nil {
		t.Errorf("c's stream after Stop: %v", err)
	}
	if cause := c.lastCause(); !errors.Is(cause, partition.ErrStopped) || !errors.Is(cause, recipes.ErrRevoked) {
		t.Errorf("c's Partition ended with %v, want ErrStopped", cause)
	}
	waitConverged(t, admin, path, []*member{a, b}, items)
	waitFor(t, 10*time.Second, "c to leave the group", func() bool { return len(children(t, admin, path+"/party")) == 2 })
	noOverlap(t, l)
}

// TestRebalanceOnDeath: a member cut off from the ensemble loses its
// Partition (its lease runs out before the server expires its session);
// once the session expired, the others split the set without it; when the
// member is back (a new session, its group node re-created), the set is
// split among all again. No item is held by two members at any instant.
func TestRebalanceOnDeath(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	items := itemsN(6)
	l := newLedger()
	a := start(t, ctx, connect(t, e.Addrs()), l, path, "a", items)
	b := start(t, ctx, connect(t, e.Addrs()), l, path, "b", items)
	cs, link := private(t, e, "c")
	c := start(t, ctx, cs, l, path, "c", items)
	waitConverged(t, admin, path, []*member{a, b, c}, items)
	old := cs.ID()
	if err := link.Blackhole(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*sessionTimeout, "c's Partition to end", func() bool { return c.lastCause() != nil })
	if cause := c.lastCause(); !errors.Is(cause, recipes.ErrSuspended) && !errors.Is(cause, recipes.ErrSessionLost) {
		t.Errorf("c's Partition ended with %v, want a loss", cause)
	}
	waitConverged(t, admin, path, []*member{a, b}, items)
	if err := errors.Join(link.Heal(), link.Cut(), link.Restore()); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, admin, path, []*member{a, b, c}, items)
	if cs.ID() == old {
		t.Errorf("c kept session 0x%x through the expiry", old)
	}
	noOverlap(t, l)
}

// TestExpireSession: the same through testenv's Link.ExpireSession (the
// member's session expired by the server while the member is cut off, the
// link healed at once): the member is back under a new session and the
// set is split among all; nothing held twice.
func TestExpireSession(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	items := itemsN(6)
	l := newLedger()
	a := start(t, ctx, connect(t, e.Addrs()), l, path, "a", items)
	cs, link := private(t, e, "c")
	c := start(t, ctx, cs, l, path, "c", items)
	waitConverged(t, admin, path, []*member{a, c}, items)
	old := cs.ID()
	if err := link.ExpireSession(ctx, old); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, admin, path, []*member{a, c}, items)
	if cs.ID() == old {
		t.Fatalf("c kept session 0x%x", old)
	}
	c.mu.Lock()
	if len(c.causes) == 0 || !errors.Is(c.causes[0], recipes.ErrSuspended) && !errors.Is(c.causes[0], recipes.ErrSessionLost) {
		t.Errorf("c's first Partition ended with %v, want a loss", c.causes)
	}
	c.mu.Unlock()
	noOverlap(t, l)
}

// TestSessionClosed: a member whose session is closed (its process
// exiting) leaves at once: its stream ends with recipes.ErrClosed and the
// others split the set.
func TestSessionClosed(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	items := itemsN(4)
	l := newLedger()
	a := start(t, ctx, connect(t, e.Addrs()), l, path, "a", items)
	cs := connect(t, e.Addrs())
	c := start(t, ctx, cs, l, path, "c", items)
	waitConverged(t, admin, path, []*member{a, c}, items)
	testutil.CloseSession(t, cs)
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		t.Fatal("c's stream still open after its session closed")
	}
	if err := c.st.Err(); !errors.Is(err, recipes.ErrClosed) {
		t.Errorf("c's stream: %v, want ErrClosed", err)
	}
	if cause := c.lastCause(); !errors.Is(cause, recipes.ErrSessionLost) && !errors.Is(cause, partition.ErrStopped) {
		t.Errorf("c's Partition ended with %v", cause)
	}
	waitConverged(t, admin, path, []*member{a}, items)
	noOverlap(t, l)
}

// TestReleaseBeforeAcquire: when the members change, a member that is
// slow to release keeps its items: the newcomer whose share names them
// queues for their locks and acquires only after the old owner's Release
// began, and after the old owner's Context was done.
func TestReleaseBeforeAcquire(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	items := itemsN(4)
	l := newLedger()
	a := start(t, ctx, connect(t, e.Addrs()), l, path, "a", items)
	waitConverged(t, admin, path, []*member{a}, items)
	const slow = 2 * time.Second
	a.mu.Lock()
	a.hold = slow
	a.mu.Unlock()
	b := start(t, ctx, connect(t, e.Addrs()), l, path, "b", items)
	share := partition.Stride("b", []string{"a", "b"}, items)
	// b queues behind a on each item of its share (kazoo's order: one
	// after the other, so the first one), and gets nothing meanwhile.
	waitFor(t, 10*time.Second, "b waiting for a's lock", func() bool { return len(lockNodes(t, admin, path, items)[share[0]]) == 2 })
	if cause := a.lastCause(); !errors.Is(cause, partition.ErrRebalance) {
		t.Fatalf("a's Partition ended with %v, want ErrRebalance", cause)
	}
	b.mu.Lock()
	got := b.received
	b.mu.Unlock()
	if got != 0 {
		t.Fatalf("b received a Partition while a held the items")
	}
	waitConverged(t, admin, path, []*member{a, b}, items)
	l.mu.Lock()
	released := l.releases["a"][0]
	var aEnd time.Time
	var bIvs []interval
	for _, iv := range l.intervals {
		if iv.member == "a" && aEnd.IsZero() {
			aEnd = iv.to
		}
		if iv.member == "b" {
			bIvs = append(bIvs, *iv)
		}
	}
	l.mu.Unlock()
	for _, iv := range bIvs {
		if !iv.from.After(released) || !iv.from.After(aEnd) {
			t.Errorf("b acquired %s %v after a's Release began and %v after a's Context was done", iv.item, iv.from.Sub(released), iv.from.Sub(aEnd))
		}
	}
	if d := released.Sub(aEnd); d < slow-50*time.Millisecond {
		t.Errorf("a released %v after its Context was done, want about %v", d, slow)
	}
	noOverlap(t, l)
}

// TestChurn: members join and leave over and over while one of the others
// has its session expired; no item is ever believed held by two members,
// each item's tokens grow from holder to holder, and once the churn stops
// the set is split among the members left.
func TestChurn(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	items := itemsN(6)
	l := newLedger()
	a := start(t, ctx, connect(t, e.Addrs()), l, path, "a", items)
	b := start(t, ctx, connect(t, e.Addrs()), l, path, "b", items)
	cs, link := private(t, e, "c")
	c := start(t, ctx, cs, l, path, "c", items)
	expired := make(chan error, 1)
	go func() {
		time.Sleep(time.Second) // mid-churn
		expired <- link.ExpireSession(ctx, cs.ID())
	}()
	ds := connect(t, e.Addrs())
	for range 4 {
		d := start(t, ctx, ds, l, path, "d", items)
		waitFor(t, 30*time.Second, "d to get a partition", func() bool { return d.held() != nil })
		d.stop(t)
	}
	if err := <-expired; err != nil {
		t.Fatal(err)
	}
	waitConverged(t, admin, path, []*member{a, b, c}, items)
	noOverlap(t, l)
	l.mu.Lock()
	n := len(l.intervals)
	l.mu.Unlock()
	t.Logf("%d holdings of %d items", n, len(items))
}

// TestStop: Stop ends the stream (Err nil), the member leaves the group,
// and the Partition it held ends with ErrStopped but keeps its locks until
// its Release; releasing again sends nothing.
func TestStop(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	s, counter := testutil.CountedSession(t, e.Addrs())
	items := itemsN(3)
	p, err := partition.New(s, path, items, partition.WithID("solo"), partition.WithBoundary(boundary))
	if err != nil {
		t.Fatal(err)
	}
	st := p.Run(ctx)
	part := receive(t, st, 30*time.Second)
	if !slices.Equal(part.Items(), items) || !slices.Equal(part.Members(), []string{"solo"}) || part.Context().Err() != nil {
		t.Fatalf("partition %v of %v, %v", part.Items(), part.Members(), part.Context().Err())
	}
	st.Stop()
	for range st.C {
		t.Error("a second Partition")
	}
	if err := st.Err(); err != nil {
		t.Errorf("Err after Stop: %v", err)
	}
	if cause := context.Cause(part.Context()); !errors.Is(cause, partition.ErrStopped) {
		t.Errorf("cause %v, want ErrStopped", cause)
	}
	waitFor(t, 10*time.Second, "solo to leave", func() bool { return len(children(t, admin, path+"/party")) == 0 })
	if got := lockNodes(t, admin, path, items); len(got) != len(items) {
		t.Fatalf("locks before Release: %v", got)
	}
	if err := part.Release(ctx); !errors.Is(err, recipes.ErrReleased) || !errors.Is(err, partition.ErrStopped) {
		t.Errorf("Release after Stop: %v, want ErrReleased and ErrStopped", err)
	}
	if got := lockNodes(t, admin, path, items); len(got) != 0 {
		t.Errorf("locks after Release: %v", got)
	}
	before := counter.Snapshot()
	if err := part.Release(ctx); !errors.Is(err, recipes.ErrReleased) {
		t.Errorf("second Release: %v", err)
	}
	if d := counter.Snapshot().Sub(before); len(d.Requests) != 0 {
		t.Errorf("second Release sent %v", d.Requests)
	}
	if part.Fence(items[0]).Valid() {
		t.Error("a fence after Release")
	}
	if _, err := part.FencedMulti(ctx, items[0]); !errors.Is(err, lock.ErrNotHeld) || !errors.Is(err, recipes.ErrReleased) {
		t.Errorf("FencedMulti after Release: %v", err)
	}
}

// receive returns the next Partition of st within d.
func receive(tb testing.TB, st *recipes.Stream[*partition.Partition], d time.Duration) *partition.Partition {
	tb.Helper()
	select {
	case part, ok := <-st.C:
		if !ok {
			tb.Fatalf("stream closed: %v", st.Err())
		}
		return part
	case <-time.After(d):
		tb.Fatalf("no partition within %v", d)
		return nil
	}
}

// TestLiveRelease: Release of a live Partition returns nil, deletes its
// locks, and the member allocates again (the same share, the members
// unchanged).
func TestLiveRelease(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	items := itemsN(2)
	p, err := partition.New(connect(t, e.Addrs()), path, items, partition.WithID("solo"), partition.WithBoundary(boundary))
	if err != nil {
		t.Fatal(err)
	}
	st := p.Run(ctx)
	defer func() {
		st.Stop()
		for part := range st.C {
			_ = part.Release(ctx)
		}
	}()
	first := receive(t, st, 30*time.Second)
	tok := first.Fence("item-0").Token
	if err := first.Release(ctx); err != nil {
		t.Fatalf("Release of a live partition: %v", err)
	}
	if cause := context.Cause(first.Context()); !errors.Is(cause, recipes.ErrReleased) {
		t.Errorf("cause after Release: %v", cause)
	}
	second := receive(t, st, 30*time.Second)
	if !slices.Equal(second.Items(), items) || second.Fence("item-0").Token <= tok {
		t.Errorf("second partition %v, token %d after %d", second.Items(), second.Fence("item-0").Token, tok)
	}
	if got := lockNodes(t, admin, path, items); len(got["item-0"]) != 1 {
		t.Errorf("locks %v", got)
	}
	if err := second.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestFencing: FencedMulti writes under an item's lock, refuses an item not
// owned, and is rejected by ZooKeeper once the lock node is gone, which
// also ends the Partition (recipes.ErrNodeDeleted).
func TestFencing(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	items := itemsN(2)
	p, err := partition.New(connect(t, e.Addrs()), path, items, partition.WithID("solo"), partition.WithBoundary(boundary))
	if err != nil {
		t.Fatal(err)
	}
	st := p.Run(ctx)
	defer func() {
		st.Stop()
		for part := range st.C {
			_ = part.Release(ctx)
		}
	}()
	part := receive(t, st, 30*time.Second)
	defer part.Release(ctx) //nolint:errcheck
	data := path + "/data"
	if _, err := admin.Conn().Create(data, []byte("0"), 0, testutil.ACL()); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatal(err)
	}
	if _, err := part.FencedMulti(ctx, "item-1", &zk.SetDataRequest{Path: data, Data: []byte("1"), Version: -1}); err != nil {
		t.Fatal(err)
	}
	if _, err := part.FencedMulti(ctx, "item-9", &zk.SetDataRequest{Path: data, Data: []byte("2"), Version: -1}); !errors.Is(err, partition.ErrNotOwned) {
		t.Errorf("FencedMulti of an item not owned: %v", err)
	}
	node := part.Fence("item-1").Path
	if err := admin.Conn().Delete(node, -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-part.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the Partition outlived its lock node")
	}
	if cause := context.Cause(part.Context()); !errors.Is(cause, recipes.ErrNodeDeleted) {
		t.Errorf("cause %v, want ErrNodeDeleted", cause)
	}
	if _, err := part.FencedMulti(ctx, "item-1", &zk.SetDataRequest{Path: data, Data: []byte("3"), Version: -1}); !errors.Is(err, recipes.ErrFenced) {
		t.Errorf("FencedMulti after the lock node was deleted: %v", err)
	}
	if got, _, err := admin.Conn().Get(data); err != nil || string(got) != "1" {
		t.Errorf("data %q, %v", got, err)
	}
}

// TestRunning: one Partitioner is one member: Run while its stream is open
// fails with ErrRunning; once that stream ended, Run works again.
func TestRunning(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	p, err := partition.New(connect(t, e.Addrs()), path, itemsN(2), partition.WithID("solo"), partition.WithBoundary(boundary))
	if err != nil {
		t.Fatal(err)
	}
	st := p.Run(ctx)
	part := receive(t, st, 30*time.Second)
	again := p.Run(ctx)
	for range again.C {
		t.Error("a second stream sent a partition")
	}
	if err := again.Err(); !errors.Is(err, partition.ErrRunning) {
		t.Errorf("Run while running: %v", err)
	}
	st.Stop()
	for range st.C {
	}
	_ = part.Release(ctx)
	third := p.Run(ctx)
	part = receive(t, third, 30*time.Second)
	third.Stop()
	for range third.C {
	}
	_ = part.Release(ctx)
}

// TestFunc: a custom partition function decides the shares; a member whose
// share is empty receives an empty Partition (allocation done), ended as
// any other on rebalance; a function that names an unknown item ends the
// stream with ErrBadShare, and the member leaves.
func TestFunc(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	items := itemsN(3)
	l := newLedger()
	first := partition.WithFunc(func(id string, members, items []string) []string {
		if id == members[0] {
			return items
		}
		return nil
	})
	a := start(t, ctx, connect(t, e.Addrs()), l, path, "a", items, first)
	b := start(t, ctx, connect(t, e.Addrs()), l, path, "b", items, first)
	waitFor(t, 30*time.Second, "a with all, b with none", func() bool {
		pa, pb := a.held(), b.held()
		return pa != nil && pb != nil && len(pa.Items()) == 3 && len(pb.Items()) == 0 && len(pb.Members()) == 2 && len(pa.Members()) == 2
	})
	bad, err := partition.New(connect(t, e.Addrs()), path, items, partition.WithID("c"), partition.WithBoundary(boundary),
		partition.WithFunc(func(string, []string, []string) []string { return []string{"nope"} }))
	if err != nil {
		t.Fatal(err)
	}
	st := bad.Run(ctx)
	for range st.C {
		t.Error("a bad share was sent")
	}
	if err := st.Err(); !errors.Is(err, partition.ErrBadShare) {
		t.Errorf("bad function: %v", err)
	}
	if cause := b.lastCause(); !errors.Is(cause, partition.ErrRebalance) {
		t.Errorf("b's empty Partition ended with %v, want ErrRebalance (c joined)", cause)
	}
	waitFor(t, 10*time.Second, "c to leave", func() bool { return len(children(t, admin, path+"/party")) == 2 })
	noOverlap(t, l)
}

// TestKazooLayout: with the kazoo dialect the members are ShallowParty
// nodes "<uuid hex32>-<id>" and the locks kazoo Lock nodes; the split is
// the same.
func TestKazooLayout(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	items := itemsN(5)
	l := newLedger()
	kazoo := partition.WithDialect(recipes.Kazoo)
	a := start(t, ctx, connect(t, e.Addrs()), l, path, "go-a", items, kazoo)
	b := start(t, ctx, connect(t, e.Addrs()), l, path, "go-b", items, kazoo)
	waitConverged(t, admin, path, []*member{a, b}, items)
	party := regexp.MustCompile(`^[0-9a-f]{32}-go-[ab]$`)
	for _, n := range children(t, admin, path+"/party") {
		if !party.MatchString(n) {
			t.Errorf("party node %s", n)
		}
	}
	lockName := regexp.MustCompile(`^[0-9a-f]{32}__lock__\d{10}$`)
	for item, ns := range lockNodes(t, admin, path, items) {
		for _, n := range ns {
			if !lockName.MatchString(n) {
				t.Errorf("%s: lock node %s", item, n)
			}
		}
	}
	noOverlap(t, l)
}

// TestDoneCtx: Run with a done ctx sends nothing and its stream says why.
func TestDoneCtx(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	s, counter := testutil.CountedSession(t, e.Addrs())
	p, err := partition.New(s, path, itemsN(2), partition.WithBoundary(boundary))
	if err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	before := counter.Snapshot()
	st := p.Run(done)
	for range st.C {
		t.Error("sent a partition")
	}
	if err := st.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("Err %v, want context.Canceled", err)
	}
	if d := counter.Snapshot().Sub(before); len(d.Requests) != 0 {
		t.Errorf("a done ctx sent %v", d.Requests)
	}
	// The Partitioner is free again.
	live := ctxT(t, time.Minute)
	st = p.Run(live)
	part := receive(t, st, 30*time.Second)
	st.Stop()
	for range st.C {
	}
	if err := part.Release(done); !errors.Is(err, partition.ErrStopped) {
		t.Errorf("Release with a done ctx after Stop: %v", err)
	}
	admin := connect(t, e.Addrs())
	waitFor(t, 10*time.Second, "the locks deleted in the background", func() bool { return len(lockNodes(t, admin, path, itemsN(2))) == 0 })
}

// TestBadInput: New refuses bad input on a live session and writes
// nothing.
func TestBadInput(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	s := connect(t, e.Addrs())
	for _, tc := range []struct {
		path  string
		items []string
		opts  []partition.Option
		want  error
	}{
		{path, nil, nil, partition.ErrInvalidItems},
		{path, []string{"a", "a"}, nil, partition.ErrInvalidItems},
		{path, []string{"a/b"}, nil, recipes.ErrInvalidPath},
		{path + "/", []string{"a"}, nil, recipes.ErrInvalidPath},
		{"/zookeeper/x", []string{"a"}, nil, recipes.ErrInvalidPath},
		{path, []string{"a"}, []partition.Option{partition.WithID("x/y")}, recipes.ErrInvalidPath},
		{path, []string{"a"}, []partition.Option{partition.WithBoundary(-time.Second)}, recipes.ErrBadArgument},
		{path, []string{"a"}, []partition.Option{partition.WithFunc(nil)}, recipes.ErrBadArgument},
	} {
		if p, err := partition.New(s, tc.path, tc.items, tc.opts...); p != nil || !errors.Is(err, tc.want) {
			t.Errorf("New(%q, %v): %v, want %v", tc.path, tc.items, err, tc.want)
		}
	}
	if _, err := partition.New(nil, path, []string{"a"}); !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("nil session: %v", err)
	}
	if got := children(t, s, path); got != nil {
		t.Errorf("bad input wrote %v", got)
	}
}

// TestCost counts a member's requests against the docs, with the path's
// nodes in place (their lazy creation is not the steady state).
func TestCost(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	items := itemsN(2)
	for _, p := range []string{"/zkrecipes-test", "/zkrecipes-test/partition", path, path + "/party", path + "/locks", path + "/locks/item-0", path + "/locks/item-1"} {
		if _, err := admin.Conn().Create(p, nil, 0, testutil.ACL()); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	s, counter := testutil.CountedSession(t, e.Addrs())
	p, err := partition.New(s, path, items, partition.WithID("solo"), partition.WithBoundary(boundary))
	if err != nil {
		t.Fatal(err)
	}
	before := counter.Snapshot()
	st := p.Run(ctx)
	part := receive(t, st, 30*time.Second)
	// The watches on the lock nodes are armed in the background.
	waitFor(t, 10*time.Second, "the lock watches", func() bool { return counter.Snapshot().Sub(before).Req(zkcount.OpGetData) == 3 })
	// The join and the two locks are the Session's first creates under
	// party, locks/item-0 and locks/item-1: in the secured pass the
	// open-parent check reads each of the 3 parents' ACL first (not again
	// when allocating again below).
	testutil.WantOps(t, "Run up to the first Partition (1 member, 2 items)", counter.Snapshot().Sub(before), testutil.FirstCreateUnder(3, map[zkcount.Op]int64{
		zkcount.OpCreate: 1 + 2, zkcount.OpExists: 1, // join; a lock per item
		zkcount.OpGetChildren2: 1 + 2, zkcount.OpGetData: 1 + 2, // the group's watch; the locks' listing and watch
	}))
	before = counter.Snapshot()
	if err := part.Release(ctx); err != nil {
		t.Fatal(err)
	}
	testutil.WantOps(t, "Release (2 items)", counter.Snapshot().Sub(before), map[zkcount.Op]int64{zkcount.OpDelete: 2})
	before = counter.Snapshot()
	second := receive(t, st, 30*time.Second)
	waitFor(t, 10*time.Second, "the lock watches", func() bool { return counter.Snapshot().Sub(before).Req(zkcount.OpGetData) == 2 })
	testutil.WantOps(t, "allocating again (2 items)", counter.Snapshot().Sub(before), map[zkcount.Op]int64{
		zkcount.OpCreate: 2, zkcount.OpGetChildren2: 2, zkcount.OpGetData: 2,
	})
	before = counter.Snapshot()
	st.Stop()
	for range st.C {
	}
	testutil.WantOps(t, "the stream's end (leaving)", counter.Snapshot().Sub(before), map[zkcount.Op]int64{zkcount.OpExists: 1, zkcount.OpDelete: 1})
	_ = second.Release(ctx)
}
