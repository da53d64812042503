// The engine's queue of reads: the items to read (a node's data, its
// children, or the missing root's existence), how the Session's watch
// events and the loads fill the queue, and how it is sent in batches of
// up to maxInFlight pipelined reads.

package cache

import (
	"context"
	"sort"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
)

type itemKind uint8

const (
	kData   itemKind = iota // read a node's data (GetData)
	kKids                   // list a node's children (Children)
	kExists                 // watch the missing root (Exists)
)

type itemKey struct {
	kind itemKind
	path string
}

// item is one read to do.
type item struct {
	key      itemKey
	init     load     // part of the current load
	ifCached whenGone // kData: only if the node is still in the view
}

// load says whether a queued read is part of the current load (the load's
// EventInitialized waits for it) or follows a change.
type load bool

const (
	change load = false // a read that follows a change
	inLoad load = true  // a read of the current load
)

// whenGone says what a queued data read does when its node has left the
// view by its turn.
type whenGone bool

const (
	readAnyway whenGone = false // read it all the same
	skipIfGone whenGone = true  // skip it (the read of a node already cached)
)

// enqueueAll queues a read of every cached node (data, and children where
// listed), root first.
func (e *engine) enqueueAll(init load) {
	if e.cfg.rootData {
		e.enqueue(kData, e.root, init, readAnyway)
	} else {
		e.enqueue(kKids, e.root, init, readAnyway)
	}
	e.mu.RLock()
	paths := make([]string, 0, len(e.nodes))
	for p := range e.nodes {
		if p != e.root {
			paths = append(paths, p)
		}
	}
	e.mu.RUnlock()
	sort.Strings(paths) // parents first
	if e.cfg.rootData && e.cfg.maxDepth > 0 && e.cached(e.root) {
		// (A root not in the view is listed once its data read adds it.)
		e.enqueue(kKids, e.root, init, readAnyway)
	}
	for _, p := range paths {
		e.enqueue(kData, p, init, skipIfGone)
		if e.depth(p) < e.cfg.maxDepth {
			e.enqueue(kKids, p, init, readAnyway)
		}
	}
}

func (e *engine) enqueue(kind itemKind, path string, init load, ifCached whenGone) {
	k := itemKey{kind, path}
	it := e.queued[k]
	if it != nil {
		if init && !it.init {
			it.init = true
			e.initPending++
		}
		it.ifCached = it.ifCached && ifCached
		return
	}
	it = &item{key: k, init: init, ifCached: ifCached}
	if init {
		e.initPending++
	}
	e.queued[k] = it
	e.queue = append(e.queue, it)
}

func (e *engine) pop() *item {
	if len(e.queue) == 0 {
		return nil
	}
	it := e.queue[0]
	e.queue[0] = nil
	e.queue = e.queue[1:]
	delete(e.queued, it.key)
	return it
}

// takeEvents turns watch events into reads.
func (e *engine) takeEvents(evs []zk.Event) {
	for _, ev := range evs {
		p := ev.Path
		cached := e.cached(p)
		switch ev.Type {
		case zk.EventNotWatching:
			e.needRefresh = true // the session ended: the state hook says more
		case zk.EventNodeCreated:
			if p == e.root {
				e.enqueueRoot(change)
			}
		case zk.EventNodeDataChanged:
			if cached && (p != e.root || e.cfg.rootData) {
				e.enqueue(kData, p, change, skipIfGone)
			}
		case zk.EventNodeChildrenChanged:
			if (cached || p == e.root) && e.depth(p) < e.cfg.maxDepth {
				e.enqueue(kKids, p, change, readAnyway)
			}
		case zk.EventNodeDeleted:
			switch {
			case p == e.root:
				if cached {
					e.get(p).deleted = true
				}
				e.enqueue(kExists, p, change, readAnyway)
			case cached:
				// The deletion also fires the parent's child watch: its
				// listing says whether the node is gone, and if it is
				// listed again (created again, or the event was an older
				// incarnation's), a read of its data tells which. That
				// watch was not set at the deletion if the listing of the
				// parent that the last batch applied was answered after
				// it (the event, which came before that answer, is taken
				// after the batch): that listing may have named a new
				// incarnation, and no event will come: list it again.
				en := e.get(p)
				en.suspect, en.deleted = true, true
				if parent, _ := zkpath.Split(p); e.wasListed(parent) {
					e.enqueue(kKids, parent, change, readAnyway)
				}
			}
		}
	}
}

// wasListed reports whether the batch being applied, or the last one
// applied, applied a listing of p.
func (e *engine) wasListed(p string) bool {
	_, ok := e.listed[p]
	return ok
}

// enqueueRoot queues the reads that find the root's state.
func (e *engine) enqueueRoot(init load) {
	if e.cfg.rootData {
		e.enqueue(kData, e.root, init, readAnyway)
	} else {
		e.enqueue(kKids, e.root, init, readAnyway)
	}
}

// maxInFlight bounds the reads a cache has in flight: it takes up to this
// many queued reads at once, sends them together (each on a goroutine of
// its own until its answer is in: go-zookeeper pipelines them on the
// connection) and applies their answers in queue order.
const maxInFlight = 16

// result is the answer to one queued read.
type result struct {
	skip  bool  // nothing to read any more (see skip)
	sent  int64 // the incarnation (czxid) of the node in the view when sent, 0 if none
	data  []byte
	names []string
	stat  *zk.Stat
	found bool
	err   error
}

// skip reports whether a queued read has become pointless: its node (or,
// for a node's data, its parent) left the view meanwhile.
func (e *engine) skip(it *item) bool {
	p := it.key.path
	if p == e.root {
		return false
	}
	switch it.key.kind {
	case kData:
		parent, _ := zkpath.Split(p)
		return e.get(parent) == nil || (it.ifCached == skipIfGone && e.get(p) == nil)
	case kKids:
		return e.get(p) == nil
	}
	return false
}

// popBatch takes up to maxInFlight reads off the queue.
func (e *engine) popBatch() []*item {
	var batch []*item
	for len(batch) < maxInFlight {
		it := e.pop()
		if it == nil {
			break
		}
		batch = append(batch, it)
	}
	return batch
}

// prepare returns the batch's results with what is known before sending
// (skip, sent) and the indexes of the reads to send.
func (e *engine) prepare(batch []*item) (res []result, todo []int) {
	res = make([]result, len(batch))
	todo = make([]int, 0, len(batch))
	for i, it := range batch {
		if res[i].skip = e.skip(it); !res[i].skip {
			res[i].sent = e.czxid(it.key.path)
			todo = append(todo, i)
		}
	}
	return res, todo
}

// readBatch sends the batch's reads and waits for their answers.
func (e *engine) readBatch(ctx context.Context, batch []*item) []result {
	res, todo := e.prepare(batch)
	if len(todo) == 1 {
		e.read(ctx, batch[todo[0]], &res[todo[0]])
		return res
	}
	var wg sync.WaitGroup
	for _, i := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.read(ctx, batch[i], &res[i])
		}()
	}
	wg.Wait()
	return res
}

// read sends one queued read (1 request; 2 when its watch fired in flight,
// see recipes.WatchSet).
func (e *engine) read(ctx context.Context, it *item, r *result) {
	switch it.key.kind {
	case kData:
		r.data, r.stat, r.err = e.ws.GetData(ctx, it.key.path)
	case kKids:
		r.names, r.stat, r.err = e.ws.Children(ctx, it.key.path)
	default:
		r.found, r.stat, r.err = e.ws.Exists(ctx, it.key.path)
	}
}
