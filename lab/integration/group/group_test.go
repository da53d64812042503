package group_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/group"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/persistent"
	"github.com/zkrecipes/zkrecipes/recipes"
)

func TestBadInput(t *testing.T) {
	e := ensemble(t)
	s := connect(t, e.Addrs())
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	for _, id := range []string{"", "a/b", ".", "..", "a\x00", "a\xff"} {
		if m, err := group.Join(ctx, s, path, id); m != nil || !errors.Is(err, group.ErrInvalidID) {
			t.Errorf("Join as %q: %v", id, err)
		}
	}
	for _, p := range []string{"", "g", "/g/", "/zookeeper/g"} {
		if m, err := group.Join(ctx, s, p, "a"); m != nil || !errors.Is(err, recipes.ErrInvalidPath) {
			t.Errorf("Join %q: %v", p, err)
		}
	}
	if _, err := group.Join(ctx, nil, path, "a"); !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("Join with a nil session: %v", err)
	}
	if _, err := group.Join(ctx, s, path, "a", group.WithDialect(recipes.Kazoo), group.WithData([]byte("x"))); !errors.Is(err, recipes.ErrBadArgument) {
		t.Errorf("Join kazoo with data: %v", err)
	}
	if _, err := group.Join(ctx, s, path, "a", group.WithData(make([]byte, s.MaxData()))); !errors.Is(err, recipes.ErrDataTooLarge) {
		t.Errorf("Join with too much data: %v", err)
	}
	if got := children(t, s, path); len(got) != 0 {
		t.Errorf("bad input wrote %v", got)
	}
	m := join(t, ctx, s, path, "a")
	if err := m.Update(ctx, make([]byte, s.MaxData())); !errors.Is(err, recipes.ErrDataTooLarge) {
		t.Errorf("Update with too much data: %v", err)
	}
	k := join(t, ctx, s, path+"-kazoo", "k", group.WithDialect(recipes.Kazoo))
	if err := k.Update(ctx, []byte("x")); !errors.Is(err, recipes.ErrBadArgument) {
		t.Errorf("Update of a kazoo member: %v", err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := group.Join(done, s, path, "b"); !errors.Is(err, context.Canceled) {
		t.Errorf("Join with a done ctx: %v", err)
	}
	if _, err := group.Members(done, s, path); !errors.Is(err, context.Canceled) {
		t.Errorf("Members with a done ctx: %v", err)
	}
}

// TestJoinListLeave: members are listed, sorted by id, with their payload
// and session, from the moment Join returns; Update changes the payload;
// Leave removes the member at once; leaving again is nothing.
func TestJoinListLeave(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	reader := connect(t, e.Addrs())
	path := testPath(t) + "/workers"
	if got := members(t, ctx, reader, path); len(got) != 0 {
		t.Fatalf("members of a missing group: %v", got)
	}
	var ms []*group.Member
	sessions := map[string]int64{}
	for _, id := range []string{"c", "a", "b"} {
		s := connect(t, e.Addrs())
		ms = append(ms, join(t, ctx, s, path, id, group.WithData([]byte("addr-"+id))))
		sessions[id] = s.ID()
		// Listed as soon as Join returned, by another session.
		if _, ok := members(t, ctx, reader, path).Get(id); !ok {
			t.Fatalf("%s not listed after Join", id)
		}
	}
	snap := members(t, ctx, reader, path)
	if !ids(snap, "a", "b", "c") {
		t.Fatalf("members %v", snap.IDs())
	}
	for _, i := range snap {
		if string(i.Data) != "addr-"+i.ID || i.SessionID != sessions[i.ID] || i.Node != path+"/"+i.ID || i.Version != 0 {
			t.Errorf("member %+v", i)
		}
	}
	if ms[1].ID() != "a" || ms[1].Path() != path+"/a" || string(ms[1].Data()) != "addr-a" || ms[1].Present().Err() != nil {
		t.Errorf("member a: %s %s %q %v", ms[1].ID(), ms[1].Path(), ms[1].Data(), ms[1].Present().Err())
	}
	if err := ms[1].Update(ctx, []byte("moved")); err != nil {
		t.Fatal(err)
	}
	if i, _ := members(t, ctx, reader, path).Get("a"); string(i.Data) != "moved" || i.Version != 1 {
		t.Errorf("after Update: %+v", i)
	}
	if err := ms[0].Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if got := members(t, ctx, reader, path); !ids(got, "a", "b") {
		t.Fatalf("after c left: %v", got.IDs())
	}
	if err := ms[0].Leave(ctx); err != nil {
		t.Errorf("Leave again: %v", err)
	}
	if c := context.Cause(ms[0].Present()); !errors.Is(c, recipes.ErrReleased) {
		t.Errorf("Present after Leave: %v", c)
	}
	if err := ms[0].Update(ctx, nil); !errors.Is(err, group.ErrLeft) {
		t.Errorf("Update after Leave: %v", err)
	}
}

// TestDuplicateID: a second Join with an id that a live member holds
// waits (Curator's GroupMember would take the node over), and gets it
// once the first leaves.
func TestDuplicateID(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	first := join(t, ctx, connect(t, e.Addrs()), path, "x", group.WithData([]byte("first")))
	s2 := connect(t, e.Addrs())
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := group.Join(short, s2, path, "x"); !errors.Is(err, persistent.ErrTaken) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Join with a held id: %v", err)
	}
	if i, _ := members(t, ctx, s2, path).Get("x"); string(i.Data) != "first" {
		t.Fatalf("the first member's node was touched: %+v", i)
	}
	joined := make(chan error, 1)
	go func() {
		m, err := group.Join(ctx, s2, path, "x", group.WithData([]byte("second")))
		if err == nil {
			t.Cleanup(func() { _ = m.Leave(context.Background()) })
		}
		joined <- err
	}()
	if err := first.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-joined; err != nil {
		t.Fatal(err)
	}
	if i, _ := members(t, ctx, s2, path).Get("x"); string(i.Data) != "second" || i.SessionID != s2.ID() {
		t.Fatalf("after the first left: %+v", i)
	}
}

// TestDeadMember: a member whose process died disappears: at once when its
// session was closed without Leave, once its session expires when it went
// silent (within a session timeout, plus the server's tick).
func TestDeadMember(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	reader := connect(t, e.Addrs())
	w := group.Watch(ctx, reader, path)
	defer w.Stop()
	until(t, w, 10*time.Second, "an empty group", func(s group.Snapshot) bool { return len(s) == 0 })

	closed := connect(t, e.Addrs())
	join(t, ctx, closed, path, "closed")
	silent, link := private(t, e, "silent")
	join(t, ctx, silent, path, "silent")
	until(t, w, 10*time.Second, "both members", func(s group.Snapshot) bool { return ids(s, "closed", "silent") })

	testutil.CloseSession(t, closed) // no Leave: the process just ends
	until(t, w, 5*time.Second, "the closed member gone", func(s group.Snapshot) bool { return ids(s, "silent") })

	if err := link.Blackhole(); err != nil { // the process is frozen or gone: nothing from it any more
		t.Fatal(err)
	}
	died := time.Now()
	until(t, w, 3*sessionTimeout, "the silent member gone", func(s group.Snapshot) bool { return len(s) == 0 })
	took := time.Since(died)
	t.Logf("silent member gone %v after it went silent (session timeout %v)", took, sessionTimeout)
	if took > sessionTimeout+sessionTimeout/2 { // slack for a loaded machine, below a second timeout
		t.Errorf("took %v, more than a session timeout", took)
	}
}

// TestMemberBackAfterExpiry: a live member whose session expired is listed
// again, with a new node, once its new session is established; a Watch
// sees it go and come back.
func TestMemberBackAfterExpiry(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	reader := connect(t, e.Addrs())
	s, link := private(t, e, "expiry")
	m := join(t, ctx, s, path, "m", group.WithData([]byte("v1")))
	w := group.Watch(ctx, reader, path)
	defer w.Stop()
	first := until(t, w, 10*time.Second, "the member", func(s group.Snapshot) bool { return ids(s, "m") })
	present := m.Present()
	old := s.ID()
	if err := link.ExpireSession(ctx, old); err != nil {
		t.Fatal(err)
	}
	expired := time.Now()
	select {
	case <-present.Done():
	case <-time.After(2 * sessionTimeout):
		t.Fatal("Present not done after the session expired")
	}
	if c := context.Cause(present); !errors.Is(c, recipes.ErrSessionLost) {
		t.Fatalf("Present's cause %v", c)
	}
	if err := m.Update(ctx, []byte("v2")); err != nil { // waits for the re-creation
		t.Fatal(err)
	}
	back := until(t, w, 10*time.Second, "the member back with v2", func(snap group.Snapshot) bool {
		i, ok := snap.Get("m")
		return ok && i.SessionID == s.ID() && string(i.Data) == "v2"
	})
	t.Logf("member listed again %v after its session expired", time.Since(expired))
	if back[0].Czxid <= first[0].Czxid || s.ID() == old {
		t.Fatalf("not a new node: %+v after %+v", back[0], first[0])
	}
}

// TestRestartedMember: a process dies silently and a new one joins with the
// same id: Join returns within about a session timeout of the death, when
// the old session expires, and the new member is listed.
func TestRestartedMember(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	old, link := private(t, e, "old")
	join(t, ctx, old, path, "worker")
	if err := link.Blackhole(); err != nil {
		t.Fatal(err)
	}
	died := time.Now()
	s := connect(t, e.Addrs())
	join(t, ctx, s, path, "worker", group.WithData([]byte("new")))
	took := time.Since(died)
	t.Logf("joined %v after the old process went silent (session timeout %v)", took, sessionTimeout)
	if took > sessionTimeout+sessionTimeout/2 { // slack for a loaded machine, below a second timeout
		t.Errorf("took %v, more than a session timeout", took)
	}
	if i, ok := members(t, ctx, s, path).Get("worker"); !ok || i.SessionID != s.ID() || string(i.Data) != "new" {
		t.Fatalf("member %+v", i)
	}
}

// TestWatch: the first Snapshot, one per change (join, update, leave), and
// coalescing: a reader that does not read while five members join gets the
// newest Snapshot next, never an older one; Stop closes C with a nil Err.
func TestWatch(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	s := connect(t, e.Addrs())
	w := group.Watch(ctx, connect(t, e.Addrs()), path)
	if snap := next(t, w, 10*time.Second); len(snap) != 0 {
		t.Fatalf("first snapshot of a missing group: %v", snap.IDs())
	}
	a := join(t, ctx, s, path, "a")
	until(t, w, 10*time.Second, "a", func(s group.Snapshot) bool { return ids(s, "a") })
	if err := a.Update(ctx, []byte("new")); err != nil {
		t.Fatal(err)
	}
	until(t, w, 10*time.Second, "a's update", func(s group.Snapshot) bool {
		i, _ := s.Get("a")
		return string(i.Data) == "new" && i.Version == 1
	})
	// Five joins while nobody reads: the watch keeps only the newest.
	for i := range 5 {
		join(t, ctx, s, path, fmt.Sprintf("m%d", i))
	}
	want := []string{"a", "m0", "m1", "m2", "m3", "m4"}
	waitFor(t, 10*time.Second, "all six listed", func() bool { return ids(members(t, ctx, s, path), want...) })
	// The watch has seen every join once this snapshot comes; whatever
	// was pending before it was replaced, so it is the next or the one
	// after, and nothing older follows.
	got := until(t, w, 10*time.Second, "all six", func(s group.Snapshot) bool { return ids(s, want...) })
	for i := range got {
		got[i].Data = []byte("mine") // the reader's own copy
	}
	if err := a.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	snap := next(t, w, 10*time.Second)
	if !ids(snap, want[1:]...) {
		t.Fatalf("after a left: %v (a snapshot older than the last one seen?)", snap.IDs())
	}
	if i, _ := snap.Get("m0"); string(i.Data) == "mine" {
		t.Fatal("snapshots share their data")
	}
	w.Stop()
	for range w.C {
	}
	if err := w.Err(); err != nil {
		t.Fatalf("Err after Stop: %v", err)
	}
	// The Watch's goroutines (2 + 1 per member) are gone with C, the
	// session still open.
	if left := testutil.Settle(5*time.Second, func(g string) bool { return strings.Contains(g, "zkrecipes/group.") }); len(left) > 0 {
		t.Fatalf("goroutines left after Stop:\n%s", strings.Join(left, "\n\n"))
	}
}

// TestWatchCloseCauses: C closes with ctx's error when ctx ends, with
// recipes.ErrClosed when the session is closed, and at once with ctx's
// error (nothing sent) when ctx is already done.
func TestWatchCloseCauses(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	join(t, ctx, connect(t, e.Addrs()), path, "a")

	cctx, cancel := context.WithCancelCause(ctx)
	w := group.Watch(cctx, connect(t, e.Addrs()), path)
	until(t, w, 10*time.Second, "a", func(s group.Snapshot) bool { return ids(s, "a") })
	why := errors.New("shutting down")
	cancel(why)
	for range w.C {
	}
	if err := w.Err(); !errors.Is(err, context.Canceled) || !errors.Is(err, why) {
		t.Fatalf("Err after cancel: %v", err)
	}

	s := connect(t, e.Addrs())
	w = group.Watch(ctx, s, path)
	until(t, w, 10*time.Second, "a", func(s group.Snapshot) bool { return ids(s, "a") })
	testutil.CloseSession(t, s)
	for range w.C {
	}
	if err := w.Err(); !errors.Is(err, recipes.ErrClosed) {
		t.Fatalf("Err after the session closed: %v", err)
	}

	counted, counter := testutil.CountedSession(t, e.Addrs())
	before := counter.Snapshot()
	done, stop := context.WithCancel(ctx)
	stop()
	w = group.Watch(done, counted, path)
	for snap := range w.C {
		t.Errorf("a done ctx sent %v", snap.IDs())
	}
	if err := w.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("Err with a done ctx: %v", err)
	}
	if d := counter.Snapshot().Sub(before); d.Total() != 0 {
		t.Errorf("a done ctx sent requests: %v", d.Requests)
	}
}

// TestKazooLayout: a Go member in kazoo's layout is "<uuid hex32>__party__"
// with its id as data; the kazoo listing reads ids from data and ignores
// other children; the Curator listing of the same path sees node names.
func TestKazooLayout(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	s := connect(t, e.Addrs())
	kazoo := group.WithDialect(recipes.Kazoo)
	m := join(t, ctx, s, path, "worker one", kazoo)
	if !regexp.MustCompile(`^[0-9a-f]{32}__party__$`).MatchString(strings.TrimPrefix(m.Path(), path+"/")) {
		t.Fatalf("kazoo member node %s", m.Path())
	}
	if data, _, err := s.Conn().Get(m.Path()); err != nil || string(data) != "worker one" {
		t.Fatalf("data %q, %v", data, err)
	}
	// A child that is not a party member (kazoo's test: the name contains
	// "__party__").
	if _, err := s.Conn().Create(path+"/other", []byte("x"), zk.FlagEphemeral, testutil.ACL()); err != nil {
		t.Fatal(err)
	}
	snap := members(t, ctx, s, path, kazoo)
	if !ids(snap, "worker one") || snap[0].Node != m.Path() || string(snap[0].Data) != "worker one" {
		t.Fatalf("kazoo listing %+v", snap)
	}
	if got := members(t, ctx, s, path); len(got) != 2 {
		t.Fatalf("Curator listing %v, want both children", got.IDs())
	}
	w := group.Watch(ctx, s, path, kazoo)
	defer w.Stop()
	until(t, w, 10*time.Second, "the kazoo member", func(s group.Snapshot) bool { return ids(s, "worker one") })
	if err := m.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	until(t, w, 10*time.Second, "nobody", func(s group.Snapshot) bool { return len(s) == 0 })
}

// TestShallowPartyLayout: a Go member in kazoo's ShallowParty layout is
// "<uuid hex32>-<id>" with its id as data; every child is a member, its id
// the name after the first "-"; Update is refused (the id is the name);
// Watch follows joins and leaves.
func TestShallowPartyLayout(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	s := connect(t, e.Addrs())
	shallow := group.WithShallowParty()
	m := join(t, ctx, s, path, "worker-1", shallow)
	if !regexp.MustCompile(`^[0-9a-f]{32}-worker-1$`).MatchString(strings.TrimPrefix(m.Path(), path+"/")) {
		t.Fatalf("shallow member node %s", m.Path())
	}
	if data, _, err := s.Conn().Get(m.Path()); err != nil || string(data) != "worker-1" {
		t.Fatalf("data %q, %v", data, err)
	}
	if err := m.Update(ctx, []byte("x")); !errors.Is(err, recipes.ErrBadArgument) {
		t.Errorf("Update of a shallow member: %v", err)
	}
	// Any child is a member, read as kazoo reads it.
	for _, name := range []string{"abc-other-1", "plain"} {
		if _, err := s.Conn().Create(path+"/"+name, nil, zk.FlagEphemeral, testutil.ACL()); err != nil {
			t.Fatal(err)
		}
	}
	snap := members(t, ctx, s, path, shallow)
	if !ids(snap, "other-1", "plain", "worker-1") {
		t.Fatalf("shallow listing %v", snap.IDs())
	}
	if i, _ := snap.Get("worker-1"); i.Node != m.Path() || i.SessionID != s.ID() || string(i.Data) != "worker-1" {
		t.Fatalf("the Go member as listed: %+v", i)
	}
	w := group.Watch(ctx, s, path, shallow)
	defer w.Stop()
	until(t, w, 10*time.Second, "three members", func(s group.Snapshot) bool { return ids(s, "other-1", "plain", "worker-1") })
	m2 := join(t, ctx, s, path, "worker-0", shallow)
	until(t, w, 10*time.Second, "the second Go member", func(s group.Snapshot) bool {
		return ids(s, "other-1", "plain", "worker-0", "worker-1")
	})
	for _, m := range []*group.Member{m, m2} {
		if err := m.Leave(ctx); err != nil {
			t.Fatal(err)
		}
	}
	until(t, w, 10*time.Second, "the foreign children only", func(s group.Snapshot) bool { return ids(s, "other-1", "plain") })
}

// TestCost counts requests against the docs.
func TestCost(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	s, counter := testutil.CountedSession(t, e.Addrs())
	mkdirs(t, s, path)
	measure := func(what string, want map[zkcount.Op]int64, f func()) {
		t.Helper()
		before := counter.Snapshot()
		f()
		var total int64
		for _, v := range want {
			total += v
		}
		waitFor(t, 10*time.Second, what+"'s requests", func() bool { return counter.Snapshot().Sub(before).Total() >= total })
		testutil.WantOps(t, what, counter.Snapshot().Sub(before), want)
	}
	var m *group.Member
	// Join is the Session's first create under path (made by mkdirs): in
	// the secured pass the open-parent check reads path's ACL first.
	measure("Join", testutil.FirstCreateUnder(1, map[zkcount.Op]int64{zkcount.OpCreate: 1, zkcount.OpExists: 1}), func() { m = join(t, ctx, s, path, "a") })
	measure("Update", map[zkcount.Op]int64{zkcount.OpSetData: 1, zkcount.OpExists: 1}, func() {
		if err := m.Update(ctx, []byte("x")); err != nil {
			t.Fatal(err)
		}
	})
	other := connect(t, e.Addrs())
	join(t, ctx, other, path, "b")
	join(t, ctx, other, path, "c")
	measure("Members of 3", map[zkcount.Op]int64{zkcount.OpGetChildren2: 1, zkcount.OpGetData: 3}, func() { members(t, ctx, s, path) })
	var w *recipes.Stream[group.Snapshot]
	measure("Watch's first snapshot of 3", map[zkcount.Op]int64{zkcount.OpGetChildren2: 1, zkcount.OpGetData: 3}, func() {
		w = group.Watch(ctx, s, path)
		next(t, w, 10*time.Second)
	})
	defer w.Stop()
	measure("Watch seeing a join", map[zkcount.Op]int64{zkcount.OpGetChildren2: 1, zkcount.OpGetData: 1}, func() {
		join(t, ctx, other, path, "d")
		until(t, w, 10*time.Second, "d", func(s group.Snapshot) bool { return len(s) == 4 })
	})
	// Leave: 1 exists + 1 delete. The Watch sees it by its child watch (1
	// getChildren), or first by the member's data watch (then +1 getData,
	// answered "no node").
	before := counter.Snapshot()
	if err := m.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	until(t, w, 10*time.Second, "a gone", func(s group.Snapshot) bool { return len(s) == 3 })
	waitFor(t, 10*time.Second, "the watch's listing", func() bool {
		return counter.Snapshot().Sub(before).Req(zkcount.OpGetChildren2) >= 1
	})
	d := counter.Snapshot().Sub(before)
	if d.Req(zkcount.OpExists) != 1 || d.Req(zkcount.OpDelete) != 1 || d.Req(zkcount.OpGetChildren2) != 1 ||
		d.Req(zkcount.OpGetData) > 1 || d.Total() != 3+d.Req(zkcount.OpGetData) {
		t.Errorf("Leave seen by a Watch: %v", d.Requests)
	}
	t.Logf("Leave seen by a Watch: %v", d.Requests)
}

// TestWatchThroughExpiry: the watching session expires; the Watch goes on
// under the new session and reports the changes made meanwhile and after.
func TestWatchThroughExpiry(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	s := connect(t, e.Addrs())
	join(t, ctx, s, path, "a")
	ws, link := private(t, e, "watcher")
	w := group.Watch(ctx, ws, path)
	defer w.Stop()
	until(t, w, 10*time.Second, "a", func(s group.Snapshot) bool { return ids(s, "a") })
	old := ws.ID()
	if err := link.ExpireSession(ctx, old); err != nil {
		t.Fatal(err)
	}
	join(t, ctx, s, path, "b")
	until(t, w, 20*time.Second, "a and b", func(s group.Snapshot) bool { return ids(s, "a", "b") })
	if ws.ID() == old {
		t.Fatal("the watcher's session was not replaced")
	}
	join(t, ctx, s, path, "c")
	until(t, w, 10*time.Second, "a, b and c", func(s group.Snapshot) bool { return ids(s, "a", "b", "c") })
	if err := w.Err(); err != nil {
		t.Fatalf("Err while open: %v", err)
	}
}
