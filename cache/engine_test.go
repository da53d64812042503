package cache

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
)

// The engine's merge logic against a fake ZooKeeper: the tests pop the
// engine's batches and answer each read from the fake's state at the
// moment they choose, and hand it the watch events they choose, as the
// run loop would (events arriving during a batch are taken after it is
// applied).

// fakeZK is a ZooKeeper data tree with zxids, no watches.
type fakeZK struct {
	zxid  int64
	nodes map[string]*fakeNode
}

type fakeNode struct {
	data string
	stat zk.Stat
}

func newFakeZK() *fakeZK { return &fakeZK{nodes: make(map[string]*fakeNode)} }

func (f *fakeZK) create(tb testing.TB, p, data string) {
	tb.Helper()
	if f.nodes[p] != nil {
		tb.Fatalf("fake: create %s: exists", p)
	}
	f.zxid++
	parent, _ := zkpath.Split(p)
	if pn := f.nodes[parent]; pn != nil {
		pn.stat.Pzxid, pn.stat.Cversion, pn.stat.NumChildren = f.zxid, pn.stat.Cversion+1, pn.stat.NumChildren+1
	} else if p != "/" && parent != "/" {
		tb.Fatalf("fake: create %s: no parent", p)
	}
	f.nodes[p] = &fakeNode{data: data, stat: zk.Stat{Czxid: f.zxid, Mzxid: f.zxid, Pzxid: f.zxid}}
}

func (f *fakeZK) set(tb testing.TB, p, data string) {
	tb.Helper()
	n := f.nodes[p]
	if n == nil {
		tb.Fatalf("fake: set %s: missing", p)
	}
	f.zxid++
	n.data, n.stat.Mzxid, n.stat.Version = data, f.zxid, n.stat.Version+1
}

func (f *fakeZK) del(tb testing.TB, p string) {
	tb.Helper()
	if f.nodes[p] == nil || len(f.kids(p)) > 0 {
		tb.Fatalf("fake: delete %s: missing or has children", p)
	}
	f.zxid++
	delete(f.nodes, p)
	parent, _ := zkpath.Split(p)
	if pn := f.nodes[parent]; pn != nil {
		pn.stat.Pzxid, pn.stat.Cversion, pn.stat.NumChildren = f.zxid, pn.stat.Cversion+1, pn.stat.NumChildren-1
	}
}

func (f *fakeZK) kids(p string) []string {
	var names []string
	for q := range f.nodes {
		if parent, name := zkpath.Split(q); parent == p && q != p {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// answer fills r as the server would answer it now.
func (f *fakeZK) answer(it *item, r *result) {
	n := f.nodes[it.key.path]
	if n == nil {
		if it.key.kind != kExists {
			r.err = zk.ErrNoNode
		}
		return
	}
	st := n.stat
	r.stat = &st
	switch it.key.kind {
	case kData:
		r.data = []byte(n.data)
	case kKids:
		r.names = f.kids(it.key.path)
	default:
		r.found = true
	}
}

// testEngine is an engine without a session, whose events a checker
// (the integration tests' recorder's rules) reads.
type testEngine struct {
	*engine
	tb   testing.TB
	out  chan Event
	last map[string]Node
	in   map[string]bool
	log  []string
}

func newTestEngine(tb testing.TB, root string, cfg config) *testEngine {
	e := newEngine(nil, root, cfg)
	out := make(chan Event, 1000)
	e.out, e.queued = out, make(map[itemKey]*item)
	return &testEngine{engine: e, tb: tb, out: out, last: make(map[string]Node), in: make(map[string]bool)}
}

// batch applies the next batch, each read answered by answer.
func (te *testEngine) batch(answer func(it *item, r *result)) bool {
	te.tb.Helper()
	batch := te.popBatch()
	if len(batch) == 0 {
		return false
	}
	res, todo := te.prepare(batch)
	for _, i := range todo {
		answer(batch[i], &res[i])
	}
	if err := te.applyBatch(context.Background(), batch, res); err != nil {
		te.tb.Fatal(err)
	}
	te.check()
	return true
}

// drain applies batches answered by f until the queue is empty.
func (te *testEngine) drain(f *fakeZK) {
	te.tb.Helper()
	for n := 0; te.batch(f.answer); n++ {
		if n > 1000 {
			te.tb.Fatal("the queue does not empty")
		}
	}
}

// check reads the events sent and applies the recorder's rules: no path's
// events go back, added and removed alternate, removals are of the state
// last reported.
func (te *testEngine) check() {
	te.tb.Helper()
	for {
		var ev Event
		select {
		case ev = <-te.out:
		default:
			return
		}
		te.log = append(te.log, ev.String())
		p := ev.Node.Path
		prev, seen := te.last[p]
		switch ev.Type {
		case EventAdded:
			if te.in[p] {
				te.tb.Errorf("%v: added twice", ev)
			}
			if seen && ev.Node.Stat.Mzxid <= prev.Stat.Mzxid {
				te.tb.Errorf("%v: went back from mzxid %d", ev, prev.Stat.Mzxid)
			}
			te.in[p] = true
		case EventUpdated:
			if !te.in[p] || ev.Node.Stat.Czxid != prev.Stat.Czxid || ev.Node.Stat.Mzxid <= prev.Stat.Mzxid {
				te.tb.Errorf("%v: bad update after %v", ev, prev)
			}
		case EventRemoved:
			if !te.in[p] || ev.Node.Stat.Mzxid != prev.Stat.Mzxid {
				te.tb.Errorf("%v: removed while not added, or another state than %v", ev, prev)
			}
			te.in[p] = false
		}
		if p != "" {
			te.last[p] = ev.Node
		}
	}
}

// converged fails unless the view is what f holds (a tree cache of all).
func (te *testEngine) converged(f *fakeZK) {
	te.tb.Helper()
	var got, want []string
	for _, n := range te.all() {
		got = append(got, fmt.Sprintf("%s=%s@%d/%d", n.Path, n.Data, n.Stat.Czxid, n.Stat.Mzxid))
	}
	slices.Sort(got)
	for p, n := range f.nodes {
		if p == te.root || strings.HasPrefix(p, te.root+"/") {
			want = append(want, fmt.Sprintf("%s=%s@%d/%d", p, n.data, n.stat.Czxid, n.stat.Mzxid))
		}
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		te.tb.Errorf("view\n  %v\nwant\n  %v", got, want)
	}
}

func treeCfg() config { return config{kind: "tree", rootData: true, maxDepth: math.MaxInt} }

func ev(t zk.EventType, p string) zk.Event { return zk.Event{Type: t, Path: p} }

// TestChildReadUnderReplacedParent: a read of a child's data answered
// after its parent was deleted and created again (with a child of the
// same name) must not put the new parent's child under the old parent in
// the view: the old parent's replacement would then report the child
// removed and added again with the same state (TestChurn's "went back
// from mzxid" in lab/integration/cache).
func TestChildReadUnderReplacedParent(t *testing.T) {
	f := newFakeZK()
	f.create(t, "/r", "r")
	f.create(t, "/r/g", "g")
	f.create(t, "/r/g/a", "a")
	te := newTestEngine(t, "/r", treeCfg())
	te.enqueueAll(true)
	te.drain(f)
	te.converged(f)

	// a is deleted and created again: its data watch and g's child
	// watch fire; g's listing names a, which is suspect: its data is
	// to be read.
	f.del(t, "/r/g/a")
	f.create(t, "/r/g/a", "a2")
	te.takeEvents([]zk.Event{ev(zk.EventNodeDeleted, "/r/g/a"), ev(zk.EventNodeChildrenChanged, "/r/g")})
	te.batch(f.answer)
	if _, ok := te.queued[itemKey{kData, "/r/g/a"}]; !ok {
		t.Fatalf("no data read of /r/g/a queued: %v", te.log)
	}

	// Before that read is answered, g is deleted and created again,
	// with a child a: the read answers the new g's a.
	f.del(t, "/r/g/a")
	f.del(t, "/r/g")
	f.create(t, "/r/g", "g2")
	f.create(t, "/r/g/a", "a3")
	te.batch(f.answer)
	// The events that arrived before that answer: g's data watch
	// (deleted), g's child watch (set by the listing: a deleted), r's
	// child watch (g deleted).
	te.takeEvents([]zk.Event{ev(zk.EventNodeDeleted, "/r/g"), ev(zk.EventNodeChildrenChanged, "/r/g"), ev(zk.EventNodeChildrenChanged, "/r")})
	te.drain(f)
	te.converged(f)
	t.Logf("events: %s", strings.Join(te.log, "; "))
}

// watchFake is a fakeZK with go-zookeeper's one-shot watches: the
// engine's reads set them, writes fire them, and the events wait in
// arrived until the test hands them to the engine.
type watchFake struct {
	*fakeZK
	watches map[fanWatch]bool
	arrived []zk.Event
}

type fanWatch struct {
	path string
	kind int // 0 data, 1 exist, 2 child
}

func newWatchFake() *watchFake {
	return &watchFake{fakeZK: newFakeZK(), watches: make(map[fanWatch]bool)}
}

func (f *watchFake) fire(p string, t zk.EventType, kinds ...int) {
	hit := false
	for _, k := range kinds {
		if f.watches[fanWatch{p, k}] {
			delete(f.watches, fanWatch{p, k})
			hit = true
		}
	}
	if hit {
		f.arrived = append(f.arrived, ev(t, p))
	}
}

func (f *watchFake) answer(it *item, r *result) {
	f.fakeZK.answer(it, r)
	p := it.key.path
	switch {
	case it.key.kind == kData && r.err == nil:
		f.watches[fanWatch{p, 0}] = true
	case it.key.kind == kKids && r.err == nil:
		f.watches[fanWatch{p, 2}] = true
	case it.key.kind == kExists && r.found:
		f.watches[fanWatch{p, 0}] = true
	case it.key.kind == kExists:
		f.watches[fanWatch{p, 1}] = true
	}
}

// write makes one random change among paths, firing the watches it
// fires; it does nothing when the chosen change is not possible.
func (f *watchFake) write(tb testing.TB, rnd func(int) int, paths []string) {
	p := paths[rnd(len(paths))]
	parent, _ := zkpath.Split(p)
	switch n := f.nodes[p]; {
	case n == nil && (parent == "/" || f.nodes[parent] != nil):
		f.create(tb, p, fmt.Sprint("c", f.zxid+1))
		f.fire(p, zk.EventNodeCreated, 1)
		f.fire(parent, zk.EventNodeChildrenChanged, 2)
	case n == nil:
	case len(f.kids(p)) == 0 && rnd(2) == 0:
		f.del(tb, p)
		f.fire(p, zk.EventNodeDeleted, 0, 1, 2)
		f.fire(parent, zk.EventNodeChildrenChanged, 2)
	default:
		f.set(tb, p, fmt.Sprint("s", f.zxid+1))
		f.fire(p, zk.EventNodeDataChanged, 0, 1)
	}
}

func (f *watchFake) take() []zk.Event {
	evs := f.arrived
	f.arrived = nil
	return evs
}

// TestMergeRandomInterleavings: caches of every shape over a small tree
// changed at random while their reads are in flight: each read of a
// batch is answered at a random moment between random writes, the events
// the writes fire reach the engine after the batch, as in the run loop.
// Every event passes the recorder's checks, and once the writes stop the
// view converges.
func TestMergeRandomInterleavings(t *testing.T) {
	paths := []string{"/r", "/r/g0", "/r/g1", "/r/g0/a", "/r/g1/a", "/r/g0/a/b"}
	shapes := []struct {
		name string
		cfg  config
		in   func(p string) bool
	}{
		{"tree", treeCfg(), func(p string) bool { return true }},
		{"children", config{kind: "children", maxDepth: 1}, func(p string) bool { return strings.Count(p, "/") == 2 }},
		{"node", config{kind: "node", rootData: true}, func(p string) bool { return p == "/r" }},
	}
	seeds := 2000
	if testing.Short() {
		seeds = 300
	}

	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			for seed := range seeds {
				rng := newRand(uint64(seed))
				f := newWatchFake()
				for _, p := range paths[:rng(len(paths)+1)] {
					f.create(t, p, "init")
				}
				te := newTestEngine(t, "/r", sh.cfg)
				te.enqueueAll(true)
				for step := 0; step < 80; step++ {
					te.takeEvents(f.take())
					if rng(25) == 0 {
						te.enqueueAll(false) // a reconnection's re-read
					}
					batch := te.popBatch()
					if len(batch) == 0 {
						if len(f.arrived) == 0 {
							f.write(t, rng, paths)
						}
						continue
					}
					res, todo := te.prepare(batch)
					// The reads of a batch are sent together: the server
					// answers them in any order, with writes in between.
					for _, j := range permute(rng, len(todo)) {
						for range rng(3) {
							f.write(t, rng, paths)
						}
						f.answer(batch[todo[j]], &res[todo[j]])
					}
					if err := te.applyBatch(context.Background(), batch, res); err != nil {
						t.Fatal(err)
					}
					te.check()
				}
				for n := 0; ; n++ {
					te.takeEvents(f.take())
					if !te.batch(f.answer) && len(f.arrived) == 0 {
						break
					}
					if n > 1000 {
						t.Fatal("the queue does not empty")
					}
				}
				te.convergedTo(f.fakeZK, sh.in)
				if t.Failed() {
					t.Fatalf("seed %d: events: %s", seed, strings.Join(te.log, "; "))
				}
			}
		})
	}
}

// convergedTo fails unless the view holds the nodes of f that in accepts.
func (te *testEngine) convergedTo(f *fakeZK, in func(p string) bool) {
	te.tb.Helper()
	var got, want []string
	for _, n := range te.all() {
		got = append(got, fmt.Sprintf("%s=%s@%d/%d", n.Path, n.Data, n.Stat.Czxid, n.Stat.Mzxid))
	}
	for p, n := range f.nodes {
		if (p == te.root || strings.HasPrefix(p, te.root+"/")) && in(p) {
			want = append(want, fmt.Sprintf("%s=%s@%d/%d", p, n.data, n.stat.Czxid, n.stat.Mzxid))
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		te.tb.Errorf("view\n  %v\nwant\n  %v", got, want)
	}
}

// newRand returns a deterministic source of ints in [0, n).
func newRand(seed uint64) func(n int) int {
	x := seed*0x9E3779B97F4A7C15 + 1
	return func(n int) int {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return int(x % uint64(n))
	}
}

func permute(rng func(int) int, n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := rng(i + 1)
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// settle hands the engine the events that arrived and applies batches
// answered by f until neither is left.
func (te *testEngine) settle(f *watchFake) {
	te.tb.Helper()
	for n := 0; ; n++ {
		te.takeEvents(f.take())
		if !te.batch(f.answer) && len(f.arrived) == 0 {
			return
		}
		if n > 1000 {
			te.tb.Fatal("the queue does not empty")
		}
	}
}

// applyAnswered applies the next batch, whose reads answer answers in
// the order it chooses (running f's writes in between).
func (te *testEngine) applyAnswered(answer func(batch []*item, res []result, todo []int)) {
	te.tb.Helper()
	batch := te.popBatch()
	res, todo := te.prepare(batch)
	answer(batch, res, todo)
	if err := te.applyBatch(context.Background(), batch, res); err != nil {
		te.tb.Fatal(err)
	}
	te.check()
}

func keyed(batch []*item, todo []int, kind itemKind, p string) int {
	for _, i := range todo {
		if batch[i].key == (itemKey{kind, p}) {
			return i
		}
	}
	panic(fmt.Sprintf("no read %v %s in the batch", kind, p))
}

// TestMissingChildBackInParentListing: a batch lists a parent and reads
// a child's data; the server answers the data read first, between the
// child's deletion and its creation again, and the listing after, so the
// listing names the new incarnation and sets the parent's child watch
// after its creation: no event will come. The missing child must not be
// forgotten: its parent is listed again.
func TestMissingChildBackInParentListing(t *testing.T) {
	f := newWatchFake()
	f.create(t, "/r", "r")
	f.create(t, "/r/g", "g")
	te := newTestEngine(t, "/r", config{kind: "tree", rootData: true, maxDepth: 1})
	te.enqueueAll(true)
	te.settle(f)
	f.create(t, "/r/h", "h")
	f.fire("/r", zk.EventNodeChildrenChanged, 2)
	f.set(t, "/r/g", "g1")
	f.fire("/r/g", zk.EventNodeDataChanged, 0, 1)
	te.takeEvents(f.take()) // queue: list /r, read /r/g
	te.applyAnswered(func(batch []*item, res []result, todo []int) {
		f.del(t, "/r/g") // no watch left to fire
		i := keyed(batch, todo, kData, "/r/g")
		f.answer(batch[i], &res[i])
		f.create(t, "/r/g", "g2")
		i = keyed(batch, todo, kKids, "/r")
		f.answer(batch[i], &res[i])
	})
	if len(f.arrived) != 0 {
		t.Fatalf("events: %v", f.arrived)
	}
	te.settle(f)
	te.converged(f.fakeZK)
	t.Logf("events: %s", strings.Join(te.log, "; "))
}

// TestDeletedAfterParentListing: a child is deleted and created again
// while its parent's listing is in flight, whose child watch had fired
// already: the listing names the new incarnation, and the child's
// deletion event is taken after the listing is applied. The parent must
// be listed again, for no other event will come.
func TestDeletedAfterParentListing(t *testing.T) {
	f := newWatchFake()
	f.create(t, "/r", "r")
	f.create(t, "/r/g", "g")
	te := newTestEngine(t, "/r", config{kind: "tree", rootData: true, maxDepth: 1})
	te.enqueueAll(true)
	te.settle(f)
	f.create(t, "/r/h", "h")
	f.fire("/r", zk.EventNodeChildrenChanged, 2)
	te.takeEvents(f.take()) // queue: list /r
	te.applyAnswered(func(batch []*item, res []result, todo []int) {
		f.del(t, "/r/g")
		f.fire("/r/g", zk.EventNodeDeleted, 0, 1, 2)
		f.create(t, "/r/g", "g2")
		i := keyed(batch, todo, kKids, "/r")
		f.answer(batch[i], &res[i])
	})
	te.settle(f)
	te.converged(f.fakeZK)
	t.Logf("events: %s", strings.Join(te.log, "; "))
}

// TestChildFilter: a children cache with a filter reads and reports only
// the children it accepts; the others are listed, never read.
func TestChildFilter(t *testing.T) {
	f := newFakeZK()
	f.create(t, "/g", "")
	f.create(t, "/g/a", "1")
	f.create(t, "/g/skip", "2")
	te := newTestEngine(t, "/g", config{kind: "children", maxDepth: 1,
		filter: func(p string) bool { return !strings.HasSuffix(p, "/skip") }})
	te.enqueueAll(true)
	var read []string
	for n := 0; te.batch(func(it *item, r *result) {
		read = append(read, fmt.Sprint(it.key.kind, it.key.path))
		f.answer(it, r)
	}); n++ {
		if n > 100 {
			t.Fatal("the queue does not empty")
		}
	}
	if want := []string{"1/g", "0/g/a"}; !slices.Equal(read, want) {
		t.Errorf("reads %v, want %v", read, want)
	}
	if got := te.all(); len(got) != 1 || got[0].Path != "/g/a" {
		t.Errorf("view %v, want /g/a only", got)
	}
}
