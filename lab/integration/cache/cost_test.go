package cache_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/cache"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// The costs the package doc states, counted on the wire.

// barrier waits until a cache has done every read the changes so far
// caused: three times over, it sets the sentinel node (cached) and waits
// for the cache to report it. The cache works in order, and a change
// causes a chain of at most three reads (a parent's listing, the new
// node's data, its listing), each queued when the one before is done, so
// three rounds cover it. It costs the cache 3 getData.
func barrier(tb testing.TB, w *recipes.Session, r *recorder, sentinel string) {
	tb.Helper()
	for i := range 3 {
		n := len(r.of(sentinel))
		set(tb, w, sentinel, fmt.Sprint("barrier ", i))
		waitFor(tb, 10*time.Second, "the sentinel's update", func() bool { return len(r.of(sentinel)) > n })
	}
}

// costOf runs change and returns what the cache's session sent for it,
// the barrier's reads taken off.
func costOf(tb testing.TB, counter *zkcount.Counter, w *recipes.Session, r *recorder, sentinel string, change func()) zkcount.Counts {
	tb.Helper()
	before := settled(tb, counter)
	change()
	barrier(tb, w, r, sentinel)
	d := settled(tb, counter).Sub(before)
	d.Requests[zkcount.OpGetData] -= 3
	if d.Requests[zkcount.OpGetData] == 0 {
		delete(d.Requests, zkcount.OpGetData)
	}
	return d
}

const (
	getData  = zkcount.OpGetData
	children = zkcount.OpGetChildren2
	exists   = zkcount.OpExists
)

func TestTreeCacheCosts(t *testing.T) {
	e := ensemble(t)
	w := connect(t, e.Addrs())
	s, counter := testutil.CountedSession(t, e.Addrs())
	root := testPath(t)
	n := buildTree(t, w, root, 3, 2) // 13 nodes
	sentinel := root + "/c0"
	before := settled(t, counter)
	c := newTree(t, s, root)
	r := record(t, c.Watch(ctxT(t, time.Minute)))
	r.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
	testutil.WantOps(t, "start", settled(t, counter).Sub(before), map[zkcount.Op]int64{getData: int64(n), children: int64(n)})
	barrier(t, w, r, sentinel)

	for _, tc := range []struct {
		what   string
		change func()
		want   map[zkcount.Op]int64
	}{
		{"set", func() { set(t, w, root+"/c1/c1", "v2") }, map[zkcount.Op]int64{getData: 1}},
		{"create", func() { create(t, w, root+"/c1/new", "n") }, map[zkcount.Op]int64{children: 2, getData: 1}},
		{"delete", func() { del(t, w, root+"/c1/new") }, map[zkcount.Op]int64{children: 1}},
	} {
		testutil.WantOps(t, tc.what, costOf(t, counter, w, r, sentinel, tc.change), tc.want)
	}
	// A subtree deleted one node at a time (children first): 1 listing of
	// the parent per deletion, fewer when deletions come faster than the
	// listings.
	d := costOf(t, counter, w, r, sentinel, func() { rmr(t, w, root+"/c2") })
	if got := d.Req(children); len(d.Requests) != 1 || got < 2 || got > 4 {
		t.Errorf("delete a subtree of 4: %v, want 2 to 4 getChildren", d.Requests)
	}
	t.Logf("delete a subtree of 4: %v", d.Requests)
	converge(t, 10*time.Second, w, root, treeShape, c.Nodes)
}

func TestChildrenCacheCosts(t *testing.T) {
	e := ensemble(t)
	w := connect(t, e.Addrs())
	s, counter := testutil.CountedSession(t, e.Addrs())
	root := testPath(t)
	buildTree(t, w, root, 3, 2) // 3 children with 3 each
	sentinel := root + "/c0"
	before := settled(t, counter)
	c := newChildren(t, s, root)
	r := record(t, c.Watch(ctxT(t, time.Minute)))
	r.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
	testutil.WantOps(t, "start", settled(t, counter).Sub(before), map[zkcount.Op]int64{getData: 3, children: 1})
	barrier(t, w, r, sentinel)
	for _, tc := range []struct {
		what   string
		change func()
		want   map[zkcount.Op]int64
	}{
		{"set a child", func() { set(t, w, root+"/c1", "v2") }, map[zkcount.Op]int64{getData: 1}},
		{"set a grandchild (not cached)", func() { set(t, w, root+"/c1/c0", "v2") }, map[zkcount.Op]int64{}},
		{"create a child", func() { create(t, w, root+"/new", "n") }, map[zkcount.Op]int64{children: 1, getData: 1}},
		{"delete a child", func() { del(t, w, root+"/new") }, map[zkcount.Op]int64{children: 1}},
	} {
		testutil.WantOps(t, tc.what, costOf(t, counter, w, r, sentinel, tc.change), tc.want)
	}
	converge(t, 10*time.Second, w, root, childrenShape, c.Current)
}

// TestRootCosts: a root deleted costs 1 exists (which watches for its
// creation), and its creation the reads of Watch, for each kind of cache.
func TestRootCosts(t *testing.T) {
	e := ensemble(t)
	w := connect(t, e.Addrs())
	s, counter := testutil.CountedSession(t, e.Addrs())
	base := testPath(t)
	mkdirs(t, w, base)
	for _, tc := range []struct {
		kind    string
		start   func(root string) (*recorder, func() []cache.Node)
		sh      shape
		created map[zkcount.Op]int64
	}{
		{"node", func(root string) (*recorder, func() []cache.Node) {
			c := newNode(t, s, root)
			return record(t, c.Watch(ctxT(t, time.Minute))), nodeList(c)
		}, nodeShape, map[zkcount.Op]int64{getData: 1}},
		{"children", func(root string) (*recorder, func() []cache.Node) {
			c := newChildren(t, s, root)
			return record(t, c.Watch(ctxT(t, time.Minute))), c.Current
		}, childrenShape, map[zkcount.Op]int64{children: 1}},
		{"tree", func(root string) (*recorder, func() []cache.Node) {
			c := newTree(t, s, root)
			return record(t, c.Watch(ctxT(t, time.Minute))), c.Nodes
		}, treeShape, map[zkcount.Op]int64{getData: 1, children: 1}},
	} {
		root := base + "/" + tc.kind
		create(t, w, root, "r")
		r, nodes := tc.start(root)
		r.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
		waitFor(t, 10*time.Second, "the cache's watches", func() bool { return zkWatchers(t, s.Conn()) > 0 })

		before := settled(t, counter)
		del(t, w, root)
		converge(t, 10*time.Second, w, root, tc.sh, nodes)
		waitFor(t, 10*time.Second, "the exists", func() bool { return counter.Snapshot().Sub(before).Total() >= 1 })
		testutil.WantOps(t, tc.kind+": root deleted", settled(t, counter).Sub(before), map[zkcount.Op]int64{exists: 1})

		before = settled(t, counter)
		create(t, w, root, "again")
		converge(t, 10*time.Second, w, root, tc.sh, nodes)
		want := int64(0)
		for _, n := range tc.created {
			want += n
		}
		waitFor(t, 10*time.Second, "the reads", func() bool { return counter.Snapshot().Sub(before).Total() >= want })
		testutil.WantOps(t, tc.kind+": root created", settled(t, counter).Sub(before), tc.created)
		r.stop()
		rmr(t, w, root)
	}
}
