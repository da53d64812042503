package cache_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/cache"
	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// The classes of bug that Curator's and kazoo's caches had, one test each,
// against a real server.

// buildTree creates under root a tree of fanout^1 + ... + fanout^depth
// nodes and returns how many nodes the tree has, root included.
func buildTree(tb testing.TB, s *recipes.Session, root string, fanout, depth int) int {
	tb.Helper()
	mkdirs(tb, s, root)
	n := 1
	var grow func(p string, d int)
	grow = func(p string, d int) {
		if d == depth {
			return
		}
		for i := range fanout {
			c := fmt.Sprintf("%s/c%d", p, i)
			create(tb, s, c, c)
			n++
			grow(c, d+1)
		}
	}
	grow(root, 0)
	return n
}

// TestReopenKeepsOneWatchPerNode: caches started and stopped again and
// again on one session (two at once in one round), over a tree that does
// not change, and reconnections in between, leave exactly one go-zookeeper watch per node
// and kind behind, however many times the nodes were read (Curator's
// CURATOR-167, kazoo's TreeCache that leaked its watchers once closed).
func TestReopenKeepsOneWatchPerNode(t *testing.T) {
	testutil.RequireHooks(t)
	e := ensemble(t)
	w := connect(t, e.Addrs())
	link, err := e.NewLink("reopen")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s, counter := testutil.CountedSession(t, link.Addrs())
	root := testPath(t)
	n := buildTree(t, w, root, 4, 3) // 85 nodes
	want := 2 * n                    // a data and a child watch per node
	for round := range 10 {
		before := counter.Snapshot()
		c := newTree(t, s, root)
		r := record(t, c.Watch(ctxT(t, time.Minute)))
		r.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
		if round == 1 { // two caches at once share the watches
			other := newTree(t, s, root)
			ro := record(t, other.Watch(ctxT(t, time.Minute)))
			ro.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
			converge(t, 10*time.Second, w, root, treeShape, other.Nodes)
			if got := zkWatchers(t, s.Conn()); got != want {
				t.Fatalf("two caches: %d go-zookeeper watches for %d nodes, want %d", got, n, want)
			}
			ro.stop()
		}
		if round == 2 { // a reconnection: the cache reads everything again
			if err := link.Cut(); err != nil {
				t.Fatal(err)
			}
			waitState(t, 10*time.Second, s, recipes.StateSuspended)
			if err := link.Restore(); err != nil {
				t.Fatal(err)
			}
			waitState(t, 10*time.Second, s, recipes.StateReconnected)
			waitFor(t, 10*time.Second, "the re-read", func() bool {
				d := counter.Snapshot().Sub(before)
				return d.Req(zkcount.OpGetData) >= int64(2*n)
			})
		}
		converge(t, 10*time.Second, w, root, treeShape, c.Nodes)
		r.stop()
		if got := zkWatchers(t, s.Conn()); got != want {
			t.Fatalf("round %d: %d go-zookeeper watches for %d nodes, want %d", round, got, n, want)
		}
		if armed, flights, sets := hooks.FanStats(s); armed != want || flights != 0 || sets != 0 {
			t.Fatalf("round %d: registry %d armed, %d in flight, %d open sets; want %d, 0, 0", round, armed, flights, sets, want)
		}
	}
}

// TestMissingRootBounded: a tree cache whose root is missing, created and
// deleted again and again, keeps one watch on it in between and sends
// nothing while nothing changes (Curator's CURATOR-240 and CURATOR-312:
// a TreeCache on a missing path piled up watchers until the heap ran
// out).
func TestMissingRootBounded(t *testing.T) {
	e := ensemble(t)
	w := connect(t, e.Addrs())
	s, counter := testutil.CountedSession(t, e.Addrs())
	parent := testPath(t)
	mkdirs(t, w, parent)
	root := parent + "/root"
	c := newTree(t, s, root)
	r := record(t, c.Watch(ctxT(t, 2*time.Minute)))
	r.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
	start := counter.Snapshot()
	for range 30 {
		create(t, w, root, "r")
		create(t, w, root+"/a", "a")
		create(t, w, root+"/a/b", "b")
		converge(t, 10*time.Second, w, root, treeShape, c.Nodes)
		rmr(t, w, root)
		converge(t, 10*time.Second, w, root, treeShape, c.Nodes)
	}
	waitFor(t, 10*time.Second, "one watch left: the root's exists watch", func() bool { return zkWatchers(t, s.Conn()) == 1 })
	before := settled(t, counter)
	t.Logf("30 cycles: %v", before.Sub(start).Requests)
	time.Sleep(time.Second) // an idle second: a busy cache would read
	if d := counter.Snapshot().Sub(before); d.Total() != 0 {
		t.Fatalf("an idle cache of a missing root sent %v", d.Requests)
	}
	if got, want := r.count(cache.EventAdded), 90; got != want {
		t.Fatalf("%d nodes added, want %d", got, want)
	}
}

// TestRecreatedWhileCut: a node deleted and created again while the
// connection is cut, with the same data and so the same version, is seen
// as a new node once the cache reconnects (Curator's CURATOR-391: the
// PathChildrenCache compared versions, which start again at 0, and missed
// it). Its czxid tells the incarnations apart.
func TestRecreatedWhileCut(t *testing.T) {
	e := ensemble(t)
	w := connect(t, e.Addrs())
	link, err := e.NewLink("recreated")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s := connect(t, link.Addrs())
	parent := testPath(t)
	mkdirs(t, w, parent)
	x := parent + "/x"
	create(t, w, x, "same")
	kids := newChildren(t, s, parent)
	one := newNode(t, s, x)
	rk := record(t, kids.Watch(ctxT(t, time.Minute)))
	rn := record(t, one.Watch(ctxT(t, time.Minute)))
	rk.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
	rn.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
	if err := link.Cut(); err != nil {
		t.Fatal(err)
	}
	waitState(t, 10*time.Second, s, recipes.StateSuspended)
	del(t, w, x)
	create(t, w, x, "same")
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	converge(t, 10*time.Second, w, parent, childrenShape, kids.Current)
	converge(t, 10*time.Second, w, x, nodeShape, nodeList(one))
	want := "[added same removed same added same]"
	if got := rk.history(t, x, 3); got != want {
		t.Errorf("children cache: events %s, want %s", got, want)
	}
	if got := rn.history(t, x, 3); got != want {
		t.Errorf("node cache: events %s, want %s", got, want)
	}
}

// TestRecreatedWhileCutByVersion is CURATOR-391 as its report tells it,
// on a children cache: while the cache's connection is cut, one child (x,
// ephemeral) is deleted and created again by another session with the
// same data, and another (y, set once) is deleted, created again and set
// once with other data: both are back at the version the cache holds (0
// and 1), with another czxid, and x with another ephemeral owner. Once the
// same session is back, the cache must report each removed and added
// again, and hold the new incarnations. The mutant that takes an equal
// version for "nothing new" unless it saw the deletion event
// (hooks.SetCacheCompareVersion, Curator's comparison before the fix) sees
// no deletion (go-zookeeper's restored watches report the nodes changed,
// not deleted) and keeps both old incarnations: the same checks fail on
// it, which the mutant subtest asserts.
func TestRecreatedWhileCutByVersion(t *testing.T) {
	testutil.RequireHooks(t)
	for _, mutant := range []bool{false, true} {
		t.Run(map[bool]string{false: "cache", true: "mutant"}[mutant], func(t *testing.T) {
			e := ensemble(t)
			a, b := connect(t, e.Addrs()), connect(t, e.Addrs()) // two writers: x's owners
			link, err := e.NewLink("recreated-version")
			if err != nil {
				t.Fatal(err)
			}
			defer link.Close()
			s := connect(t, link.Addrs())
			parent := testPath(t)
			mkdirs(t, a, parent)
			x, y, z := parent+"/x", parent+"/y", parent+"/z"
			if _, err := a.Conn().Create(x, []byte("x1"), zk.FlagEphemeral, acl); err != nil {
				t.Fatal(err)
			}
			create(t, a, y, "y1")
			set(t, a, y, "y2") // version 1
			create(t, a, z, "z1")
			defer hooks.SetCacheCompareVersion(mutant)()
			kids := newChildren(t, s, parent)
			r := record(t, kids.Watch(ctxT(t, time.Minute)))
			r.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
			oldX, _ := kids.Get(x)
			oldY, _ := kids.Get(y)

			if err := link.Cut(); err != nil {
				t.Fatal(err)
			}
			waitState(t, 10*time.Second, s, recipes.StateSuspended)
			del(t, a, x)
			if _, err := b.Conn().Create(x, []byte("x1"), zk.FlagEphemeral, acl); err != nil {
				t.Fatal(err)
			}
			del(t, a, y)
			create(t, a, y, "y1")
			set(t, a, y, "y3") // version 1 again, other data
			if err := link.Restore(); err != nil {
				t.Fatal(err)
			}
			waitState(t, 10*time.Second, s, recipes.StateReconnected)
			if r.count(cache.EventReset) != 0 {
				t.Fatal("the session was lost: the test needs a longer session timeout")
			}
			// Two changes of z, each awaited: the reads the reconnection
			// queued (x, y and z among them, one batch) were applied before
			// the read that brings z's second change.
			set(t, a, z, "z2")
			r.history(t, z, 2)
			set(t, a, z, "z3")
			r.history(t, z, 3)

			if !mutant {
				converge(t, 10*time.Second, a, parent, childrenShape, kids.Current)
				if got, _ := kids.Get(x); got.Stat.EphemeralOwner != b.ID() {
					t.Errorf("x owned by 0x%x, want the second writer's session 0x%x", got.Stat.EphemeralOwner, b.ID())
				}
				if got, want := r.history(t, x, 3), "[added x1 removed x1 added x1]"; got != want {
					t.Errorf("x: events %s, want %s", got, want)
				}
				if got, want := r.history(t, y, 3), "[added y2 removed y2 added y3]"; got != want {
					t.Errorf("y: events %s, want %s", got, want)
				}
				return
			}
			// The mutant holds the old incarnations: what the subtest above
			// requires fails on it.
			gotX, _ := kids.Get(x)
			gotY, _ := kids.Get(y)
			if gotX.Stat.Czxid != oldX.Stat.Czxid || gotX.Stat.EphemeralOwner != a.ID() || gotY.Stat.Czxid != oldY.Stat.Czxid || string(gotY.Data) != "y2" {
				t.Fatalf("the mutant has x = %s owned by 0x%x, y = %s; want the old incarnations %s owned by 0x%x, %s",
					describe(gotX.Data, &gotX.Stat), gotX.Stat.EphemeralOwner, describe(gotY.Data, &gotY.Stat),
					describe(oldX.Data, &oldX.Stat), a.ID(), describe(oldY.Data, &oldY.Stat))
			}
			if d := diff(view(kids.Current()), direct(t, a, parent, childrenShape)); !strings.Contains(d, "stale   "+x) || !strings.Contains(d, "stale   "+y) {
				t.Fatalf("the mutant's view differs from ZooKeeper by:\n%s\nwant x and y stale", d)
			}
			if got, want := fmt.Sprint(r.of(x)), "[added x1]"; got != want {
				t.Fatalf("the mutant reported x: %s, want %s", got, want)
			}
		})
	}
}

// TestRootAddedAndRemovedAgain: a cached root created and deleted again and
// again is reported added and removed each time, in that order (Curator's
// CURATOR-182 and CURATOR-183: the TreeCache stopped noticing the root, or
// reported "updated" instead of "added").
func TestRootAddedAndRemovedAgain(t *testing.T) {
	e := ensemble(t)
	s, w := connect(t, e.Addrs()), connect(t, e.Addrs())
	parent := testPath(t)
	mkdirs(t, w, parent)
	root := parent + "/root"
	for _, depth := range []int{0, 3} {
		c := newTree(t, s, root, cache.WithMaxDepth(depth))
		r := record(t, c.Watch(ctxT(t, time.Minute)))
		r.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
		for i := range 5 {
			create(t, w, root, fmt.Sprint(i))
			r.waitCount(t, 10*time.Second, cache.EventAdded, i+1)
			del(t, w, root)
			r.waitCount(t, 10*time.Second, cache.EventRemoved, i+1)
		}
		want := "[added 0 removed 0 added 1 removed 1 added 2 removed 2 added 3 removed 3 added 4 removed 4]"
		if got := r.history(t, root, 10); got != want {
			t.Fatalf("depth %d: events %s, want %s", depth, got, want)
		}
		r.stop()
	}
}

// TestChangeThenDelete: nodes set and deleted right after, many times over,
// never make the cache report a stale state after a newer one, a removal of
// a state it did not report, or a node still there (kazoo's TreeCache
// #645: an update read before a delete was applied after it, and the node
// came back with old data; Curator's CURATOR-324: NODE_ADDED twice).
// The recorder checks each event as it comes.
func TestChangeThenDelete(t *testing.T) {
	e := ensemble(t)
	s, w := connect(t, e.Addrs()), connect(t, e.Addrs())
	root := testPath(t)
	mkdirs(t, w, root)
	c := newTree(t, s, root)
	r := record(t, c.Watch(ctxT(t, 2*time.Minute)))
	r.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := fmt.Sprintf("%s/g%d", root, g)
			for i := range 50 {
				if _, err := w.Conn().Create(p, []byte("new"), 0, acl); err != nil {
					t.Error(err)
					return
				}
				_, _ = w.Conn().Create(p+"/kid", []byte("kid"), 0, acl)
				_, _ = w.Conn().Set(p, []byte(fmt.Sprint("v", i)), -1)
				_, _ = w.Conn().Set(p+"/kid", []byte(fmt.Sprint("k", i)), -1)
				_ = w.Conn().Delete(p+"/kid", -1)
				if err := w.Conn().Delete(p, -1); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	converge(t, 20*time.Second, w, root, treeShape, c.Nodes)
	if len(c.Nodes()) != 1 {
		t.Fatalf("nodes left in the cache: %v", c.Nodes())
	}
	t.Logf("%d events", len(r.all()))
}

// TestChildGoneDuringLoad: children deleted between the listing that names
// them and the read of their data do not keep the cache from reporting
// EventInitialized (Curator's CURATOR-4: POST_INITIALIZED_EVENT never
// came when a child went away during the first load).
func TestChildGoneDuringLoad(t *testing.T) {
	e := ensemble(t)
	s, w := connect(t, e.Addrs()), connect(t, e.Addrs())
	parent := testPath(t)
	mkdirs(t, w, parent)
	const n = 300
	for i := range n {
		create(t, w, fmt.Sprintf("%s/c%03d", parent, i), "x")
	}
	c := newChildren(t, s, parent)
	deleted := make(chan struct{})
	go func() {
		defer close(deleted)
		for i := n - 1; i >= 0; i -= 2 {
			_ = w.Conn().Delete(fmt.Sprintf("%s/c%03d", parent, i), -1)
		}
	}()
	r := record(t, c.Watch(ctxT(t, time.Minute)))
	r.waitCount(t, 20*time.Second, cache.EventInitialized, 1)
	<-deleted
	converge(t, 20*time.Second, w, parent, childrenShape, c.Current)
	if got := len(c.Current()); got != n/2 {
		t.Fatalf("%d children cached, want %d", got, n/2)
	}
}

// TestStartWhileDisconnected: a cache started while its session cannot
// reach a server loads once it can (Curator's CURATOR-328: the
// PathChildrenCache failed silently and stayed empty).
func TestStartWhileDisconnected(t *testing.T) {
	e := ensemble(t)
	w := connect(t, e.Addrs())
	link, err := e.NewLink("start-cut")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s := connect(t, link.Addrs())
	root := testPath(t)
	buildTree(t, w, root, 3, 2)
	if err := link.Cut(); err != nil {
		t.Fatal(err)
	}
	waitState(t, 10*time.Second, s, recipes.StateSuspended)
	c := newTree(t, s, root)
	r := record(t, c.Watch(ctxT(t, time.Minute)))
	set(t, w, root+"/c1", "changed while cut")
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	r.waitCount(t, 20*time.Second, cache.EventInitialized, 1)
	converge(t, 10*time.Second, w, root, treeShape, c.Nodes)
}

// TestCacheNeverWrites: a cache only reads: over a scenario with
// creations, deletions, a missing root whose parents are missing too, a
// reconnection and a session loss, its session sends reads, syncs and
// go-zookeeper's own re-registration of watches, and nothing that writes
// (Curator's CURATOR-319 and CURATOR-120: the caches created the parents
// of the node they watched, and re-created deleted ones).
func TestCacheNeverWrites(t *testing.T) {
	e := ensemble(t)
	w := connect(t, e.Addrs())
	link, err := e.NewLink("never-writes")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s, counter := testutil.CountedSession(t, link.Addrs())
	base := testPath(t)
	root := base + "/a/b/root"
	mkdirs(t, w, base)
	tree, kids, one := newTree(t, s, root), newChildren(t, s, root), newNode(t, s, root)
	rs := []*recorder{
		recordNamed(t, "tree", tree.Watch(ctxT(t, time.Minute))),
		recordNamed(t, "children", kids.Watch(ctxT(t, time.Minute))),
		recordNamed(t, "node", one.Watch(ctxT(t, time.Minute))),
	}
	for _, r := range rs {
		r.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
	}
	if ok, _, _ := w.Conn().Exists(base + "/a"); ok {
		t.Fatal("the caches created the missing parents of their root")
	}
	mkdirs(t, w, root)
	create(t, w, root+"/x", "x")
	converge(t, 10*time.Second, w, root, treeShape, tree.Nodes)
	if err := link.Cut(); err != nil {
		t.Fatal(err)
	}
	waitState(t, 10*time.Second, s, recipes.StateSuspended)
	del(t, w, root+"/x")
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	converge(t, 10*time.Second, w, root, treeShape, tree.Nodes)
	if err := link.ExpireSession(ctxT(t, time.Minute), s.ID()); err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		r.waitCount(t, 20*time.Second, cache.EventInitialized, 2)
	}
	rmr(t, w, base+"/a")
	converge(t, 10*time.Second, w, root, treeShape, tree.Nodes)
	converge(t, 10*time.Second, w, root, childrenShape, kids.Current)
	converge(t, 10*time.Second, w, root, nodeShape, nodeList(one))
	reads := map[zkcount.Op]bool{zkcount.OpGetData: true, zkcount.OpGetChildren2: true, zkcount.OpExists: true,
		zkcount.OpSync: true, zkcount.OpSetWatches: true}
	var wrote []string
	for op, n := range counter.Snapshot().Requests {
		if !reads[op] {
			wrote = append(wrote, fmt.Sprintf("%v x%d", op, n))
		}
	}
	if len(wrote) > 0 {
		t.Fatalf("the caches sent %s", strings.Join(wrote, ", "))
	}
}

// TestChurn: writers create, change, delete and create again nodes at
// three levels as fast as they can while a tree, a children and a node
// cache on one session watch them; every event passes the recorder's
// checks (never back, parents first, removals of what was reported) and
// every cache converges.
func TestChurn(t *testing.T) {
	e := ensemble(t)
	s, w := connect(t, e.Addrs()), connect(t, e.Addrs())
	root := testPath(t)
	mkdirs(t, w, root)
	tree, kids, one := newTree(t, s, root), newChildren(t, s, root), newNode(t, s, root+"/g0")
	rs := []*recorder{
		recordNamed(t, "tree", tree.Watch(ctxT(t, 2*time.Minute))),
		recordNamed(t, "children", kids.Watch(ctxT(t, 2*time.Minute))),
		recordNamed(t, "node", one.Watch(ctxT(t, 2*time.Minute))),
	}
	for _, r := range rs {
		r.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
	}
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := fmt.Sprintf("%s/g%d", root, g)
			c := w.Conn()
			for i := range 40 {
				_, _ = c.Create(p, []byte("g"), 0, acl)
				_, _ = c.Create(p+"/a", []byte("a"), 0, acl)
				_, _ = c.Create(p+"/a/b", []byte("b"), 0, acl)
				_, _ = c.Set(p+"/a", []byte(fmt.Sprint("a", i)), -1)
				_ = c.Delete(p+"/a/b", -1)
				_ = c.Delete(p+"/a", -1)
				_, _ = c.Set(p, []byte(fmt.Sprint("g", i)), -1)
				_, _ = c.Create(p+"/a", []byte("again"), 0, acl)
				if i%3 == 0 {
					_ = c.Delete(p+"/a", -1)
					_ = c.Delete(p, -1)
				}
			}
		}()
	}
	wg.Wait()
	converge(t, 30*time.Second, w, root, treeShape, tree.Nodes)
	converge(t, 30*time.Second, w, root, childrenShape, kids.Current)
	converge(t, 30*time.Second, w, root+"/g0", nodeShape, nodeList(one))
}

// TestReplacedParentChildAddedOnce: in one transaction, a cached node's
// data changes, it is deleted with its parent, and both are created
// again. The data change makes the cache read the child while its view
// still holds the parent's old incarnation: the child read then is the new
// parent's. It must not be reported under the old parent (which would
// report it removed with that parent, then added again, same node: back
// in time); it is reported once, after the new parent (found by the
// secured pass's TestChurn).
func TestReplacedParentChildAddedOnce(t *testing.T) {
	e := ensemble(t)
	s, w := connect(t, e.Addrs()), connect(t, e.Addrs())
	root := testPath(t)
	mkdirs(t, w, root+"/g")
	create(t, w, root+"/g/a", "a")
	tree := newTree(t, s, root)
	r := record(t, tree.Watch(ctxT(t, time.Minute)))
	r.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
	for i := range 10 {
		if _, err := w.Conn().Multi(
			&zk.SetDataRequest{Path: root + "/g/a", Data: []byte(fmt.Sprint("set", i)), Version: -1},
			&zk.DeleteRequest{Path: root + "/g/a", Version: -1},
			&zk.DeleteRequest{Path: root + "/g", Version: -1},
			&zk.CreateRequest{Path: root + "/g", Acl: acl},
			&zk.CreateRequest{Path: root + "/g/a", Data: []byte(fmt.Sprint("again", i)), Acl: acl},
		); err != nil {
			t.Fatal(err)
		}
		converge(t, 30*time.Second, w, root, treeShape, tree.Nodes)
	}
}
