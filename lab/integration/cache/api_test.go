package cache_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/cache"
	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestBadInput: the constructors refuse bad arguments with the documented
// sentinels, send nothing and never panic.
func TestBadInput(t *testing.T) {
	e := ensemble(t)
	s, counter := testutil.CountedSession(t, e.Addrs())
	small := connect(t, e.Addrs(), recipes.WithMaxData(64))
	long := "/" + strings.Repeat("x", 100)
	before := counter.Snapshot()
	for _, tc := range []struct {
		name string
		err  error
		make func() error
	}{
		{"node: nil session", recipes.ErrNilSession, func() error { _, err := cache.NewNodeCache(nil, "/a"); return err }},
		{"children: nil session", recipes.ErrNilSession, func() error { _, err := cache.NewChildrenCache(nil, "/a"); return err }},
		{"tree: nil session", recipes.ErrNilSession, func() error { _, err := cache.NewTreeCache(nil, "/a"); return err }},
		{"node: empty path", recipes.ErrInvalidPath, func() error { _, err := cache.NewNodeCache(s, ""); return err }},
		{"children: relative path", recipes.ErrInvalidPath, func() error { _, err := cache.NewChildrenCache(s, "a/b"); return err }},
		{"tree: trailing slash", recipes.ErrInvalidPath, func() error { _, err := cache.NewTreeCache(s, "/a/"); return err }},
		{"tree: NUL", recipes.ErrInvalidPath, func() error { _, err := cache.NewTreeCache(s, "/a\x00"); return err }},
		{"node: too long for the server", recipes.ErrDataTooLarge, func() error { _, err := cache.NewNodeCache(small, long); return err }},
		{"tree: negative depth", recipes.ErrBadArgument, func() error {
			_, err := cache.NewTreeCache(s, "/a", cache.WithMaxDepth(-1))
			return err
		}},
		{"tree: nil filter", recipes.ErrBadArgument, func() error { _, err := cache.NewTreeCache(s, "/a", cache.WithFilter(nil)); return err }},
	} {
		err := tc.make()
		if !errors.Is(err, tc.err) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.err)
		}
	}
	if _, err := cache.NewTreeCache(s, "/", nil, cache.WithMaxDepth(0)); err != nil {
		t.Errorf("a nil option: %v, want it ignored", err)
	}
	if d := counter.Snapshot().Sub(before); d.Total() != 0 {
		t.Fatalf("constructors sent %v", d.Requests)
	}
}

// TestStartTwice: a cache runs once; a second Watch fails with ErrStarted
// and sends nothing, and a nil ctx does not count as a start.
func TestStartTwice(t *testing.T) {
	e := ensemble(t)
	s, counter := testutil.CountedSession(t, e.Addrs())
	c := newNode(t, s, testPath(t))
	//lint:ignore SA1012 a nil ctx is the bad input under test
	nilStream := c.Watch(nil) //nolint:staticcheck
	for range nilStream.C {
	}
	if err := nilStream.Err(); !errors.Is(err, recipes.ErrBadArgument) {
		t.Fatalf("Watch(nil): %v, want ErrBadArgument", err)
	}
	r := record(t, c.Watch(ctxT(t, time.Minute)))
	r.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
	before := settled(t, counter)
	again := c.Watch(ctxT(t, time.Minute))
	for range again.C {
		t.Fatal("the second Watch sent an event")
	}
	if err := again.Err(); !errors.Is(err, cache.ErrStarted) {
		t.Fatalf("second Watch: %v, want ErrStarted", err)
	}
	if d := counter.Snapshot().Sub(before); d.Total() != 0 {
		t.Fatalf("the second Watch sent %v", d.Requests)
	}
}

// TestDoneCtxSendsNothing: a cache started with a done ctx sends no request
// and no event, its stream ends with ctx's error (the caller's cause
// too); a cache whose ctx ends stops reading: later changes cost its
// session nothing, and its view stays as it was.
func TestDoneCtxSendsNothing(t *testing.T) {
	testutil.RequireHooks(t)
	e := ensemble(t)
	w := connect(t, e.Addrs())
	s, counter := testutil.CountedSession(t, e.Addrs())
	root := testPath(t)
	buildTree(t, w, root, 2, 2)
	cause := errors.New("caller gave up")
	done, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	before := settled(t, counter)
	for _, st := range []*recipes.Stream[cache.Event]{
		newNode(t, s, root).Watch(done), newChildren(t, s, root).Watch(done), newTree(t, s, root).Watch(done),
	} {
		for ev := range st.C {
			t.Fatalf("event %v from a done ctx", ev)
		}
		if err := st.Err(); !errors.Is(err, context.Canceled) || !errors.Is(err, cause) {
			t.Fatalf("stream error %v, want context.Canceled and the cause", err)
		}
	}
	if d := counter.Snapshot().Sub(before); d.Total() != 0 {
		t.Fatalf("a done ctx sent %v", d.Requests)
	}

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	c := newTree(t, s, root)
	st := c.Watch(ctx)
	for ev := range st.C {
		if ev.Type == cache.EventInitialized {
			break
		}
	}
	stop()
	for range st.C { // drain until the producer is gone
	}
	if !errors.Is(st.Err(), context.Canceled) {
		t.Fatalf("stream error %v, want context.Canceled", st.Err())
	}
	was := c.Nodes()
	before = settled(t, counter)
	set(t, w, root+"/c0", "after the end")
	del(t, w, root+"/c1/c0")
	time.Sleep(500 * time.Millisecond) // give a stopped cache the time to misbehave
	if d := counter.Snapshot().Sub(before); d.Total() != 0 {
		t.Fatalf("a stopped cache sent %v", d.Requests)
	}
	if now := c.Nodes(); fmt.Sprint(view(now)) != fmt.Sprint(view(was)) {
		t.Fatal("the view of a stopped cache changed")
	}
	if _, _, sets := hooks.FanStats(s); sets != 0 {
		t.Fatalf("%d watch sets left open", sets)
	}
}

// TestSessionClosed: closing the session ends the stream with an error
// wrapping recipes.ErrClosed; a cache started on a closed session too.
func TestSessionClosed(t *testing.T) {
	e := ensemble(t)
	s := connect(t, e.Addrs())
	root := testPath(t)
	c := newTree(t, s, root)
	st := c.Watch(ctxT(t, time.Minute))
	for ev := range st.C {
		if ev.Type == cache.EventInitialized {
			break
		}
	}
	testutil.CloseSession(t, s)
	for range st.C {
	}
	if err := st.Err(); !errors.Is(err, recipes.ErrClosed) {
		t.Fatalf("stream error %v, want ErrClosed", err)
	}
	late := newNode(t, s, root).Watch(ctxT(t, time.Minute))
	for range late.C {
	}
	if err := late.Err(); !errors.Is(err, recipes.ErrClosed) {
		t.Fatalf("start on a closed session: %v, want ErrClosed", err)
	}
}

// TestDepthAndFilter: a tree cache with a depth limit and a filter caches
// exactly the nodes they let through, and watches no more: one data watch
// per cached node and one child watch per cached node above the limit.
func TestDepthAndFilter(t *testing.T) {
	e := ensemble(t)
	s, w := connect(t, e.Addrs()), connect(t, e.Addrs())
	root := testPath(t)
	buildTree(t, w, root, 3, 4)
	skip := func(p string) bool { return !strings.HasSuffix(p, "/c2") }
	c := newTree(t, s, root, cache.WithMaxDepth(2), cache.WithFilter(skip))
	sh := shape{rootData: true, maxDepth: 2, filter: skip}
	r := record(t, c.Watch(ctxT(t, time.Minute)))
	r.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
	converge(t, 10*time.Second, w, root, sh, c.Nodes)
	// root + 2 children + 4 grandchildren; child watches on root and the 2.
	if got, want := zkWatchers(t, s.Conn()), 7+3; got != want {
		t.Fatalf("%d go-zookeeper watches, want %d", got, want)
	}
	create(t, w, root+"/c0/c0/c0/new", "below the limit")
	create(t, w, root+"/c0/c3", "new")
	create(t, w, root+"/c0/c3/deep", "below the limit")
	set(t, w, root+"/c2", "filtered out")
	rmr(t, w, root+"/c1/c0/c0")
	converge(t, 10*time.Second, w, root, sh, c.Nodes)
	if kids, ok := c.Children(root + "/c0"); !ok || fmt.Sprint(kids) != "[c0 c1 c3]" {
		t.Fatalf("children of c0: %v, %v", kids, ok)
	}
	if _, ok := c.Children(root + "/c2"); ok {
		t.Fatal("a filtered node has children")
	}
}

// TestSlowReader: while the reader does not read, the cache waits for it
// and changes pile up in ZooKeeper, not in memory: once the reader reads
// again it gets the latest state of each node, possibly without the values
// in between, and never an older one after a newer one.
func TestSlowReader(t *testing.T) {
	e := ensemble(t)
	w := connect(t, e.Addrs())
	s, counter := testutil.CountedSession(t, e.Addrs())
	root := testPath(t)
	mkdirs(t, w, root)
	create(t, w, root+"/hot", "0")
	c := newTree(t, s, root)
	st := c.Watch(ctxT(t, time.Minute))
	for ev := range st.C {
		if ev.Type == cache.EventInitialized {
			break
		}
	}
	seen := c.Nodes()
	before := settled(t, counter)
	const n = 200
	for i := 1; i <= n; i++ {
		set(t, w, root+"/hot", fmt.Sprint(i))
	}
	create(t, w, root+"/late", "x")
	time.Sleep(200 * time.Millisecond) // the time for a cache that does not wait to read on
	// The cache read the first change and waits to report it.
	if d := counter.Snapshot().Sub(before); d.Total() > 2 {
		t.Fatalf("a cache whose reader does not read sent %v", d.Requests)
	}
	// The view is ahead of the reader by that one event.
	ahead, _ := c.Get(root + "/hot")
	r := recordFrom(t, st, seen)
	r.history(t, root+"/hot", 1)
	if next := r.all()[0]; next.Node.Path != root+"/hot" || next.Node.Stat.Mzxid != ahead.Stat.Mzxid {
		t.Fatalf("the view had hot at mzxid %d, the next event is %v", ahead.Stat.Mzxid, next)
	}
	converge(t, 20*time.Second, w, root, treeShape, c.Nodes)
	updates := r.count(cache.EventUpdated)
	t.Logf("%d changes read as %d updates", n, updates)
	if updates > 3 {
		t.Fatalf("%d updates for %d changes read late, want the one read before and the latest", updates, n)
	}
	if got, _ := c.Get(root + "/hot"); string(got.Data) != fmt.Sprint(n) {
		t.Fatalf("hot = %q, want %d", got.Data, n)
	}
}

// TestUnreadableNodeEndsStream: a node the session may not read (its ACL
// refuses it) ends the stream with the server's error: the cache could
// not be true.
func TestUnreadableNodeEndsStream(t *testing.T) {
	e := ensemble(t)
	s, w := connect(t, e.Addrs()), connect(t, e.Addrs())
	root := testPath(t)
	mkdirs(t, w, root)
	create(t, w, root+"/open", "o")
	if _, err := w.Conn().Create(root+"/secret", []byte("s"), 0, zk.DigestACL(zk.PermAll, "someone", "pw")); err != nil {
		t.Fatal(err)
	}
	st := newTree(t, s, root).Watch(ctxT(t, time.Minute))
	for ev := range st.C {
		if ev.Type == cache.EventInitialized {
			t.Fatal("initialized without the unreadable node")
		}
	}
	if err := st.Err(); !errors.Is(err, zk.ErrNoAuth) || !strings.Contains(err.Error(), "/secret") {
		t.Fatalf("stream error %v, want zk.ErrNoAuth naming the node", err)
	}
}

// TestWholeTree: a tree cache of "/" (here two levels of it, the
// /zookeeper tree included) is like any other.
func TestWholeTree(t *testing.T) {
	e := ensemble(t)
	s, w := connect(t, e.Addrs()), connect(t, e.Addrs())
	p := testPath(t) // deletes what an earlier run left
	c := newTree(t, s, "/", cache.WithMaxDepth(2))
	r := record(t, c.Watch(ctxT(t, time.Minute)))
	r.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
	sh := shape{rootData: true, maxDepth: 2}
	converge(t, 10*time.Second, w, "/", sh, c.Nodes)
	if _, ok := c.Get("/zookeeper"); !ok {
		t.Fatal("/zookeeper is not cached")
	}
	mkdirs(t, w, p)
	converge(t, 10*time.Second, w, "/", sh, c.Nodes)
}
