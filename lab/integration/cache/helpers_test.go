package cache_test

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/cache"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// One single-server ensemble is shared by the package's tests; tests that
// cut connections use their own Link. Tests do not run in parallel, so the
// goroutine check sees only its own test.
var sharedEnsemble = testutil.NewShared(testenv.Config{Servers: 1})

func TestMain(m *testing.M) { testutil.Main(m, sharedEnsemble) }

// ensemble returns the shared ensemble and fails the test if goroutines
// running go-zookeeper, recipes or cache code outlive it.
func ensemble(tb testing.TB) *testenv.Ensemble {
	tb.Helper()
	e := sharedEnsemble.Start(tb)
	testutil.NoLeakedGoroutines(tb, testutil.Running("recipes", "cache"))
	return e
}

// zkServers returns the addresses of the package's ensemble, for Examples.
func zkServers() []string { return sharedEnsemble.Addrs() }

var (
	connect = testutil.Connect
	ctxT    = testutil.Ctx
	waitFor = testutil.WaitFor
)

// testPath returns the test's own path, deleted with its subtree if an
// earlier run left it (so that -count=N runs again from scratch).
func testPath(tb testing.TB) string {
	tb.Helper()
	p := "/zkrecipes-test/cache/" + strings.NewReplacer("/", "_", " ", "_", "=", "_").Replace(tb.Name())
	s := connect(tb, sharedEnsemble.Start(tb).Addrs())
	rmr(tb, s, p)
	testutil.CloseSession(tb, s)
	return p
}

var acl = testutil.ACL()

// mkdirs creates p and its missing parents (persistent, empty).
func mkdirs(tb testing.TB, s *recipes.Session, p string) {
	tb.Helper()
	if p == "/" {
		return
	}
	parent, _ := zkpath.Split(p)
	if ok, _, err := s.Conn().Exists(parent); err == nil && !ok {
		mkdirs(tb, s, parent)
	}
	if _, err := s.Conn().Create(p, nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		tb.Fatalf("create %s: %v", p, err)
	}
}

// create makes p with data (its parent must exist).
func create(tb testing.TB, s *recipes.Session, p string, data string) {
	tb.Helper()
	if _, err := s.Conn().Create(p, []byte(data), 0, acl); err != nil {
		tb.Fatalf("create %s: %v", p, err)
	}
}

func set(tb testing.TB, s *recipes.Session, p string, data string) {
	tb.Helper()
	if _, err := s.Conn().Set(p, []byte(data), -1); err != nil {
		tb.Fatalf("set %s: %v", p, err)
	}
}

func del(tb testing.TB, s *recipes.Session, p string) {
	tb.Helper()
	if err := s.Conn().Delete(p, -1); err != nil {
		tb.Fatalf("delete %s: %v", p, err)
	}
}

// rmr deletes p and its subtree, if any.
func rmr(tb testing.TB, s *recipes.Session, p string) {
	tb.Helper()
	kids, _, err := s.Conn().Children(p)
	if errors.Is(err, zk.ErrNoNode) {
		return
	}
	if errors.Is(err, zk.ErrNoAuth) {
		kids, err = nil, nil // a node we may not read (TestUnreadableNodeEndsStream) has none
	}
	if err != nil {
		tb.Fatalf("children %s: %v", p, err)
	}
	for _, k := range kids {
		rmr(tb, s, zkpath.Join(p, k))
	}
	if err := s.Conn().Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		tb.Fatalf("delete %s: %v", p, err)
	}
}

// shape says what part of ZooKeeper a cache holds.
type shape struct {
	rootData bool // the root is cached (node and tree caches)
	maxDepth int
	filter   func(string) bool
}

var (
	nodeShape     = shape{rootData: true, maxDepth: 0}
	childrenShape = shape{maxDepth: 1}
	treeShape     = shape{rootData: true, maxDepth: 1 << 30}
)

// direct reads what a cache of root with shape sh should hold, straight
// from ZooKeeper through s: path -> "data@czxid/mzxid".
func direct(tb testing.TB, s *recipes.Session, root string, sh shape) map[string]string {
	tb.Helper()
	out := make(map[string]string)
	var walk func(p string, depth int) bool
	walk = func(p string, depth int) bool {
		if p != root || sh.rootData {
			data, st, err := s.Conn().Get(p)
			if errors.Is(err, zk.ErrNoNode) {
				return false
			}
			if err != nil {
				tb.Fatalf("get %s: %v", p, err)
			}
			out[p] = describe(data, st)
		}
		if depth >= sh.maxDepth {
			return true
		}
		kids, _, err := s.Conn().Children(p)
		if errors.Is(err, zk.ErrNoNode) {
			return false
		}
		if err != nil {
			tb.Fatalf("children %s: %v", p, err)
		}
		for _, k := range kids {
			c := zkpath.Join(p, k)
			if sh.filter != nil && !sh.filter(c) {
				continue
			}
			walk(c, depth+1)
		}
		return true
	}
	walk(root, 0)
	return out
}

func describe(data []byte, st *zk.Stat) string {
	return fmt.Sprintf("%s@%d/%d", data, st.Czxid, st.Mzxid)
}

func view(nodes []cache.Node) map[string]string {
	out := make(map[string]string, len(nodes))
	for _, n := range nodes {
		out[n.Path] = describe(n.Data, &n.Stat)
	}
	return out
}

func diff(got, want map[string]string) string {
	var b strings.Builder
	keys := make([]string, 0, len(got)+len(want))
	for k := range got {
		keys = append(keys, k)
	}
	for k := range want {
		if _, ok := got[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		g, gok := got[k]
		w, wok := want[k]
		switch {
		case !gok:
			fmt.Fprintf(&b, "  missing %s = %s\n", k, w)
		case !wok:
			fmt.Fprintf(&b, "  extra   %s = %s\n", k, g)
		case g != w:
			fmt.Fprintf(&b, "  stale   %s = %s, want %s\n", k, g, w)
		}
	}
	return b.String()
}

// converge waits until nodes() equals ZooKeeper's state read directly,
// failing the test with the difference after d.
func converge(tb testing.TB, d time.Duration, s *recipes.Session, root string, sh shape, nodes func() []cache.Node) {
	tb.Helper()
	deadline := time.Now().Add(d)
	for {
		want := direct(tb, s, root, sh)
		got := view(nodes())
		if reflect.DeepEqual(got, want) {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("cache of %s did not converge in %v:\n%s", root, d, diff(got, want))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// recorder reads a cache's stream on a goroutine of its own, keeps every
// event and checks, as they come, that no path's events go back: every
// EventAdded or EventUpdated of a path has a larger Mzxid than any event
// of that path before (a re-created node's too), an EventUpdated concerns
// the incarnation the path holds, EventAdded / EventRemoved alternate, a
// node is added while its parent is in (when the parent is reported at
// all) and removed after its descendants.
type recorder struct {
	tb     testing.TB
	name   string // which cache, in the failure message (recordNamed)
	st     *recipes.Stream[cache.Event]
	done   chan struct{}
	mu     sync.Mutex
	events []cache.Event
	last   map[string]cache.Node // per path: the node of its last event
	in     map[string]bool       // per path: added and not removed
	bad    []string
}

func record(tb testing.TB, st *recipes.Stream[cache.Event]) *recorder {
	return recordFrom(tb, st, nil)
}

// recordNamed is record for a test with several caches: name says which
// cache went wrong.
func recordNamed(tb testing.TB, name string, st *recipes.Stream[cache.Event]) *recorder {
	return recordAs(tb, name, st, nil)
}

// recordFrom is record for a stream whose events up to the view seen were
// read already.
func recordFrom(tb testing.TB, st *recipes.Stream[cache.Event], seen []cache.Node) *recorder {
	return recordAs(tb, "", st, seen)
}

func recordAs(tb testing.TB, name string, st *recipes.Stream[cache.Event], seen []cache.Node) *recorder {
	r := &recorder{tb: tb, name: name, st: st, done: make(chan struct{}), last: make(map[string]cache.Node), in: make(map[string]bool)}
	for _, n := range seen {
		r.last[n.Path], r.in[n.Path] = n, true
	}
	go func() {
		defer close(r.done)
		for ev := range st.C {
			r.add(ev)
		}
	}()
	tb.Cleanup(func() {
		r.stop()
		r.mu.Lock()
		defer r.mu.Unlock()
		if len(r.bad) > 0 {
			what := "the events"
			if r.name != "" {
				what = "the " + r.name + " cache's events"
			}
			tb.Errorf("%s went wrong:\n%s", what, strings.Join(r.bad, "\n"))
		}
	})
	return r
}

func (r *recorder) add(ev cache.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
	p := ev.Node.Path
	prev, seen := r.last[p]
	switch ev.Type {
	case cache.EventAdded:
		if r.in[p] {
			r.bad = append(r.bad, fmt.Sprintf("%v: added twice", ev))
		}
		if seen && ev.Node.Stat.Mzxid <= prev.Stat.Mzxid {
			r.bad = append(r.bad, fmt.Sprintf("%v: went back from mzxid %d", ev, prev.Stat.Mzxid))
		}
		if parent, _ := zkpath.Split(p); p != "/" {
			if _, reported := r.last[parent]; reported && !r.in[parent] {
				r.bad = append(r.bad, fmt.Sprintf("%v: added while its parent is not", ev))
			}
		}
		r.in[p] = true
	case cache.EventUpdated:
		switch {
		case !r.in[p]:
			r.bad = append(r.bad, fmt.Sprintf("%v: updated while not added", ev))
		case ev.Node.Stat.Czxid != prev.Stat.Czxid:
			r.bad = append(r.bad, fmt.Sprintf("%v: updated to another incarnation (czxid was %d)", ev, prev.Stat.Czxid))
		case ev.Node.Stat.Mzxid <= prev.Stat.Mzxid:
			r.bad = append(r.bad, fmt.Sprintf("%v: went back from mzxid %d", ev, prev.Stat.Mzxid))
		}
	case cache.EventRemoved:
		if !r.in[p] {
			r.bad = append(r.bad, fmt.Sprintf("%v: removed while not added", ev))
		} else if ev.Node.Stat.Mzxid != prev.Stat.Mzxid {
			r.bad = append(r.bad, fmt.Sprintf("%v: removed another state than the last reported (mzxid %d)", ev, prev.Stat.Mzxid))
		}
		for q, in := range r.in {
			if in && strings.HasPrefix(q, p+"/") {
				r.bad = append(r.bad, fmt.Sprintf("%v: removed before its descendant %s", ev, q))
			}
		}
		r.in[p] = false
	}
	if p != "" {
		r.last[p] = ev.Node
	}
}

// stop stops the stream and waits until it is closed.
func (r *recorder) stop() {
	r.st.Stop()
	<-r.done
}

// count returns the number of events of type t so far.
func (r *recorder) count(t cache.EventType) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, ev := range r.events {
		if ev.Type == t {
			n++
		}
	}
	return n
}

// all returns a copy of the events so far.
func (r *recorder) all() []cache.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]cache.Event(nil), r.events...)
}

// of returns the events of path so far, as "type data" strings.
func (r *recorder) of(path string) []string {
	var out []string
	for _, ev := range r.all() {
		if ev.Node.Path == path {
			out = append(out, fmt.Sprintf("%s %s", ev.Type, ev.Node.Data))
		}
	}
	return out
}

// history waits until path has n events (the view is updated before an
// event is sent: a test that saw the view may not have the event yet) and
// returns them as r.of does.
func (r *recorder) history(tb testing.TB, path string, n int) string {
	tb.Helper()
	waitFor(tb, 10*time.Second, fmt.Sprintf("%d events of %s", n, path), func() bool { return len(r.of(path)) >= n })
	return fmt.Sprint(r.of(path))
}

// waitCount waits until there are n events of type t.
func (r *recorder) waitCount(tb testing.TB, d time.Duration, t cache.EventType, n int) {
	tb.Helper()
	waitFor(tb, d, fmt.Sprintf("%d %s events", n, t), func() bool { return r.count(t) >= n })
}

// settled returns the counts of c once every request it counted has its
// reply counted too. zkcount records a request after go-zookeeper's write
// returns, which on a loaded machine can be after the reply was read and
// acted on: a snapshot taken right after a cache reported an event may
// miss the read behind it. Only for a connected, idle session.
func settled(tb testing.TB, c *zkcount.Counter) zkcount.Counts {
	tb.Helper()
	var snap zkcount.Counts
	waitFor(tb, 10*time.Second, "the request counter to catch up", func() bool {
		snap = c.Snapshot()
		return snap.Total() == snap.Replies
	})
	return snap
}

// zkWatchers counts the watch channels go-zookeeper keeps (of any type and
// path): go-zookeeper v1.0.4 appends one to an unexported map per GetW,
// ExistsW or ChildrenW and drops them only when an event for their path
// arrives, so this is the client memory that watches hold. It reads the
// map under go-zookeeper's own lock.
func zkWatchers(tb testing.TB, c *zk.Conn) int {
	tb.Helper()
	v := reflect.ValueOf(c).Elem()
	lock, m := v.FieldByName("watchersLock"), v.FieldByName("watchers")
	if !lock.IsValid() || !m.IsValid() || m.Kind() != reflect.Map {
		tb.Fatal("go-zookeeper's Conn has no watchers map (not v1.0.4?)")
	}
	mu := (*sync.Mutex)(unsafe.Pointer(lock.UnsafeAddr()))
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for it := m.MapRange(); it.Next(); {
		n += it.Value().Len()
	}
	return n
}

func newTree(tb testing.TB, s *recipes.Session, path string, opts ...cache.TreeOption) *cache.TreeCache {
	tb.Helper()
	c, err := cache.NewTreeCache(s, path, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func newChildren(tb testing.TB, s *recipes.Session, path string) *cache.ChildrenCache {
	tb.Helper()
	c, err := cache.NewChildrenCache(s, path)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func newNode(tb testing.TB, s *recipes.Session, path string) *cache.NodeCache {
	tb.Helper()
	c, err := cache.NewNodeCache(s, path)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func nodeList(c *cache.NodeCache) func() []cache.Node {
	return func() []cache.Node {
		if n, ok := c.Current(); ok {
			return []cache.Node{n}
		}
		return nil
	}
}
