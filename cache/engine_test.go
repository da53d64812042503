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
