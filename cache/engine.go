package cache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// config is what tells the three caches apart.
type config struct {
	kind     string // "node", "children", "tree": for messages
	rootData bool   // the root is a cached node (else only its children are)
	maxDepth int    // children of nodes at a smaller depth are listed (root: 0)
	filter   func(path string) bool
}

// engine is the machinery every cache runs: a view of a subtree, kept true
// by one goroutine (the Stream's producer) from one WatchSet's events and
// the Session's state changes.
type engine struct {
	s    *recipes.Session
	root string
	cfg  config

	started atomic.Bool

	// The view. Written by the run goroutine only, under mu.
	mu    sync.RWMutex
	nodes map[string]*entry // by path; the root of a children cache is hidden

	// Set by the Session's state hook, read by the run goroutine.
	st   stateIn
	stCh chan struct{} // capacity 1: st changed

	// The run goroutine's own state.
	ws           *recipes.WatchSet
	out          chan<- Event
	sid          int64 // the session the view was last read under
	queue        []*item
	queued       map[itemKey]*item   // the queue's items by key
	touched      map[string]struct{} // paths the batch being applied changed
	listed       map[string]struct{} // nodes whose listing the last batch applied
	initPending  int                 // queued items of the current load
	initializing bool                // a load is under way: EventInitialized ends it
	needLoad     bool                // read everything (after Start, or a session loss)
	needRefresh  bool                // read everything again (after a disconnection)
	settle       bool                // a disconnection was seen: pause before reading again
	resetPending bool                // EventReset to send
	emitted      bool                // an event was sent
}

// entry is one cached node.
type entry struct {
	node   Node
	depth  int
	kids   map[string]struct{} // names of the children in the view
	hidden bool                // the root of a children cache: not reported
	// suspect: a deletion of the path was reported, maybe of an older
	// incarnation; the parent's next listing tells (run goroutine only).
	suspect bool
	// pzxid: the largest Stat.Pzxid read of this incarnation (data read
	// or listing; run goroutine only). A child whose Czxid is not larger
	// was created before that read, so under this incarnation: see
	// apply.
	pzxid int64
	// deleted: a deletion event of the path was taken, and no read has
	// shown this incarnation since (run goroutine only). Only the
	// CURATOR-391 mutant reads it (hooks.SetCacheCompareVersion): as
	// Curator's cache, it knows a node is gone when it is told, and by
	// its version otherwise.
	deleted bool
}

// stateIn is what the state hook leaves for the run goroutine.
type stateIn struct {
	mu        sync.Mutex
	state     recipes.State
	suspended bool // a disconnection since last taken
	lost      bool // a session loss since last taken
}

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

func newEngine(s *recipes.Session, root string, cfg config) *engine {
	return &engine{s: s, root: root, cfg: cfg, nodes: make(map[string]*entry), stCh: make(chan struct{}, 1)}
}

// errStop: ctx ended while sending an event.
var errStop = errors.New("cache: stopped")

// start runs the cache on its Stream.
// nilCache is Watch on a nil cache: a Stream that ends with an error
// wrapping recipes.ErrBadArgument, having sent nothing.
func nilCache(ctx context.Context) *recipes.Stream[Event] {
	return recipes.StartStream(ctx, func(context.Context, chan<- Event) error {
		return fmt.Errorf("cache: %w: nil cache", recipes.ErrBadArgument)
	})
}

func (e *engine) start(ctx context.Context) *recipes.Stream[Event] {
	if ctx != nil && !e.started.CompareAndSwap(false, true) {
		return recipes.StartStream(ctx, func(context.Context, chan<- Event) error {
			return fmt.Errorf("%w: %s cache of %s", ErrStarted, e.cfg.kind, e.root)
		})
	}
	return recipes.StartStream(ctx, e.run)
}

func (e *engine) run(ctx context.Context, out chan<- Event) error {
	if ctx.Err() != nil {
		return nil // a done ctx sends nothing
	}
	ws, err := e.s.NewWatchSet()
	if err != nil {
		return fmt.Errorf("cache %s: %w", e.root, err)
	}
	defer ws.Close()
	state, _, remove := e.s.OnStateChange(e.onState)
	defer remove()
	e.st.mu.Lock()
	e.st.state = state
	e.st.mu.Unlock()
	e.ws, e.out = ws, out
	e.queued = make(map[itemKey]*item)
	e.needLoad = true
	if err := e.loop(ctx); !errors.Is(err, errStop) {
		return err
	}
	return nil // ctx ended: StartStream reports it
}

// onState is the Session's state hook: it runs on the connection's
// goroutine and only records the change.
func (e *engine) onState(c recipes.StateChange) {
	e.st.mu.Lock()
	e.st.state = c.State
	switch c.State {
	case recipes.StateSuspended:
		e.st.suspended = true
	case recipes.StateLost:
		e.st.lost = true
	}
	e.st.mu.Unlock()
	select {
	case e.stCh <- struct{}{}:
	default:
	}
}

// takeState returns the current state and whether a disconnection or a
// session loss happened since the last call.
func (e *engine) takeState() (state recipes.State, suspended, lost bool) {
	e.st.mu.Lock()
	defer e.st.mu.Unlock()
	state, suspended, lost = e.st.state, e.st.suspended, e.st.lost
	e.st.suspended, e.st.lost = false, false
	return state, suspended, lost
}

func (e *engine) loop(ctx context.Context) error {
	for {
		if ctx.Err() != nil {
			return errStop
		}
		e.takeEvents(e.ws.Events())
		e.listed = nil
		state, suspended, lost := e.takeState()
		if state == recipes.StateClosed {
			return fmt.Errorf("cache %s: %w", e.root, recipes.ErrClosed)
		}
		if suspended {
			e.needRefresh, e.settle = true, true
		}
		if lost {
			e.needLoad = true
			e.resetPending = e.resetPending || e.emitted
		}
		if e.resetPending {
			e.resetPending = false
			if err := e.emit(ctx, Event{Type: EventReset}); err != nil {
				return err
			}
		}
		if state == recipes.StateConnected || state == recipes.StateReconnected {
			busy, err := e.step(ctx)
			if err != nil {
				return err
			}
			if busy {
				continue
			}
		}
		select {
		case <-e.ws.Ready():
		case <-e.stCh:
		case <-ctx.Done():
			return errStop
		}
	}
}

// step does one thing on a usable session: start a load or a refresh, or
// a batch of queued reads. It reports whether there may be more to do at
// once.
func (e *engine) step(ctx context.Context) (bool, error) {
	if e.settle {
		// Back after a disconnection: go-zookeeper sets its watches again
		// on the new connection concurrently with new requests (and takes
		// the zxid to compare with from whichever answers came first). Let
		// it go first: a pause, or until the next state change.
		e.settle = false
		if err := e.s.Pause(ctx); err != nil {
			return false, e.failed(ctx, err)
		}
		return true, nil
	}
	switch {
	case e.needLoad:
		return true, e.load(ctx)
	case e.needRefresh:
		e.needRefresh = false
		if !hooks.CacheSkipReread() {
			e.enqueueAll(load(e.initializing))
		}
		return true, nil
	}
	batch := e.popBatch()
	if len(batch) == 0 {
		return false, nil
	}
	if err := e.process(ctx, batch); err != nil {
		return false, err
	}
	if e.initializing && e.initPending == 0 && !e.needLoad && !e.needRefresh {
		e.initializing = false
		if err := e.emit(ctx, Event{Type: EventInitialized}); err != nil {
			return false, err
		}
	}
	return true, nil
}

// load starts reading the whole subtree: after Watch, and after a session
// loss. A new session may be served by a server that is behind the one
// that served the view so far (a local session: see Never back in the
// package doc); a sync makes it catch up first, so nothing read after it
// is older than what the view holds.
func (e *engine) load(ctx context.Context) error {
	sid := e.s.ID()
	if e.sid != 0 && sid != e.sid {
		if err := e.sync(ctx); err != nil {
			return e.failed(ctx, err)
		}
		if e.s.ID() != sid {
			return nil // replaced again meanwhile: load again
		}
	}
	e.sid = sid
	e.needLoad, e.needRefresh = false, false
	e.initializing = true
	e.enqueueAll(inLoad)
	return nil
}

// sync asks the server to catch up with the ensemble's leader before the
// reads that follow (1 sync). Nothing is sent when ctx is done.
func (e *engine) sync(ctx context.Context) error {
	if err := recipes.ContextError(ctx); err != nil {
		return err
	}
	_, err := e.s.Conn().Sync(e.root)
	return err
}

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

func (e *engine) cached(p string) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.nodes[p] != nil
}

func (e *engine) get(p string) *entry {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.nodes[p]
}

// depth returns the depth of p below the root (the root's is 0).
func (e *engine) depth(p string) int {
	if p == e.root {
		return 0
	}
	rel := p[len(e.root):]
	if e.root == "/" {
		rel = p
	}
	return strings.Count(rel, "/")
}

// failed handles the error of a read: nil when the engine goes on (the
// read is dropped: a connection error means everything is read again once
// the session is usable, a session change means a new load), the error
// that ends the stream otherwise.
func (e *engine) failed(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return errStop
	case errors.Is(err, recipes.ErrClosed):
		return fmt.Errorf("cache %s: %w", e.root, err)
	case recipes.IsConnErr(err):
		e.needRefresh = true
		if err := e.s.Pause(ctx); err != nil {
			if ctx.Err() != nil {
				return errStop
			}
			return fmt.Errorf("cache %s: %w", e.root, err)
		}
		return nil
	}
	return fmt.Errorf("cache %s: %w", e.root, err)
}

// moved reports whether the session changed since the view was read: the
// answer just received may come from a server behind the view, so it is
// dropped and everything is read again.
func (e *engine) moved() bool {
	if e.s.ID() == e.sid {
		return false
	}
	e.needLoad = true
	return true
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

// touch records that the batch being applied changed p.
func (e *engine) touch(p string) {
	if e.touched != nil {
		e.touched[p] = struct{}{}
	}
}

// touchedNear reports whether the batch being applied changed p, a node
// above it or a node below it.
func (e *engine) touchedNear(p string) bool {
	for q := range e.touched {
		if q == p || below(q, p) || below(p, q) {
			return true
		}
	}
	return false
}

// below reports whether q is below p.
func below(q, p string) bool {
	if p == "/" {
		return q != "/"
	}
	return len(q) > len(p) && q[len(p)] == '/' && q[:len(p)] == p
}

// czxid returns the incarnation of p in the view, 0 when p is not in it.
func (e *engine) czxid(p string) int64 {
	if en := e.get(p); en != nil {
		return en.node.Stat.Czxid
	}
	return 0
}

// process reads a batch of the queue and applies the answers in order.
func (e *engine) process(ctx context.Context, batch []*item) error {
	res := e.readBatch(ctx, batch)
	if e.moved() {
		for _, it := range batch {
			if it.init {
				e.initPending--
			}
		}
		return nil
	}
	return e.applyBatch(ctx, batch, res)
}

// applyBatch applies the answers to a batch's reads in queue order.
func (e *engine) applyBatch(ctx context.Context, batch []*item, res []result) error {
	e.touched = make(map[string]struct{})
	e.listed = make(map[string]struct{})
	defer func() { e.touched = nil }()
	var connErr error
	for i, it := range batch {
		if it.init {
			e.initPending--
		}
		r := res[i]
		switch {
		case r.skip || e.skip(it):
			continue
		case e.czxid(it.key.path) != r.sent || e.touchedNear(it.key.path):
			// An earlier answer of the batch changed the node, a node
			// above it or a node below it, which this answer may
			// contradict (a listing without a child just added, a child
			// of a parent just replaced): which of the two reads the
			// server answered first is unknown. Read again.
			e.enqueue(it.key.kind, it.key.path, it.init, it.ifCached)
			continue
		case r.err != nil && !errors.Is(r.err, zk.ErrNoNode):
			if recipes.IsConnErr(r.err) && ctx.Err() == nil {
				connErr = r.err // dropped: everything is read again
				continue
			}
			return e.failed(ctx, r.err)
		}
		var err error
		switch it.key.kind {
		case kData:
			err = e.applyData(ctx, it, r)
		case kKids:
			err = e.applyKids(ctx, it, r)
		default:
			err = e.applyExists(ctx, it, r)
		}
		if err != nil {
			return err
		}
	}
	if connErr != nil {
		return e.failed(ctx, connErr)
	}
	return nil
}

func (e *engine) applyData(ctx context.Context, it *item, r result) error {
	p := it.key.path
	if r.err != nil { // the node is missing
		return e.missing(ctx, it)
	}
	return e.apply(ctx, p, r.data, r.stat, it.init)
}

// apply puts a node's data read into the view.
func (e *engine) apply(ctx context.Context, p string, data []byte, stat *zk.Stat, init load) error {
	cur := e.get(p)
	if cur != nil && !cur.deleted && hooks.CacheCompareVersion() && stat.Version == cur.node.Stat.Version {
		// The mutant (CURATOR-391): the same version is taken for the same
		// node, though a node deleted and created again meanwhile starts
		// again at version 0; only its Czxid tells.
		return nil
	}
	switch {
	case cur != nil && stat.Czxid == cur.node.Stat.Czxid:
		cur.pzxid = max(cur.pzxid, stat.Pzxid)
		cur.deleted = false // the deletion reported was an older incarnation's
		if stat.Mzxid <= cur.node.Stat.Mzxid {
			return nil // nothing new (never older: a read never goes back)
		}
		n := Node{Path: p, Data: data, Stat: *stat}
		e.mu.Lock()
		cur.node = n
		e.mu.Unlock()
		e.touch(p)
		return e.emit(ctx, Event{Type: EventUpdated, Node: cloneNode(n)})
	case cur != nil && stat.Czxid < cur.node.Stat.Czxid:
		return nil // an older incarnation: cannot be newer than the view
	}
	var pe *entry
	if p != e.root {
		parent, _ := zkpath.Split(p)
		if pe = e.get(parent); pe == nil {
			return nil
		}
		if stat.Czxid > pe.pzxid {
			// An incarnation created after the parent's last read: the
			// parent we have may have been deleted and created again
			// meanwhile, and this node be the new parent's child, which
			// must not enter the view under the old one (its removal with
			// the old parent, and its addition with the new one, would
			// report it removed and added again, unchanged). A listing of
			// the parent tells: its incarnation, and whether this node is
			// still a child of it (the suspect mark has its data read
			// again then).
			if cur != nil {
				cur.suspect = true
			}
			e.enqueue(kKids, parent, init, readAnyway)
			return nil
		}
	}
	if cur != nil {
		// Deleted and created again: the node we had is gone, with its
		// subtree.
		if err := e.remove(ctx, p); err != nil {
			return err
		}
	}
	if pe != nil {
		_, name := zkpath.Split(p)
		e.mu.Lock()
		pe.kids[name] = struct{}{}
		e.mu.Unlock()
	}
	n := Node{Path: p, Data: data, Stat: *stat}
	d := e.depth(p)
	e.mu.Lock()
	e.nodes[p] = &entry{node: n, depth: d, kids: make(map[string]struct{}), pzxid: stat.Pzxid}
	e.mu.Unlock()
	e.touch(p)
	if d < e.cfg.maxDepth {
		e.enqueue(kKids, p, init, readAnyway)
	}
	return e.emit(ctx, Event{Type: EventAdded, Node: cloneNode(n)})
}

func (e *engine) applyKids(ctx context.Context, it *item, r result) error {
	p := it.key.path
	if r.err != nil { // the node is missing
		return e.missing(ctx, it)
	}
	names, stat, cur := r.names, r.stat, e.get(p)
	switch {
	case cur == nil && e.cfg.rootData:
		// The root is not in the view yet: its data read adds it and
		// lists it again.
		e.enqueue(kData, p, it.init, readAnyway)
		return nil
	case cur == nil:
		e.mu.Lock()
		e.nodes[p] = &entry{node: Node{Path: p, Stat: *stat}, kids: make(map[string]struct{}), hidden: true, pzxid: stat.Pzxid}
		e.mu.Unlock()
		cur = e.get(p)
	case stat.Czxid < cur.node.Stat.Czxid:
		return nil // an older incarnation: cannot be newer than the view
	case stat.Czxid > cur.node.Stat.Czxid && !cur.hidden:
		// Created again: the data read replaces the node and lists it.
		e.enqueue(kData, p, it.init, readAnyway)
		return nil
	case stat.Czxid > cur.node.Stat.Czxid:
		// The hidden root, created again: its old children are gone.
		for _, name := range sortedKids(e, cur) {
			if err := e.remove(ctx, zkpath.Join(p, name)); err != nil {
				return err
			}
		}
		e.mu.Lock()
		cur.node.Stat = *stat
		e.mu.Unlock()
		cur.pzxid = stat.Pzxid
	default:
		cur.pzxid = max(cur.pzxid, stat.Pzxid)
	}
	e.listed[p] = struct{}{}
	want := make(map[string]struct{}, len(names))
	for _, name := range names {
		if c := zkpath.Join(p, name); e.cfg.filter == nil || e.cfg.filter(c) {
			want[name] = struct{}{}
		}
	}
	for _, name := range sortedKids(e, cur) {
		c := zkpath.Join(p, name)
		if _, ok := want[name]; !ok {
			if err := e.remove(ctx, c); err != nil {
				return err
			}
		} else if ce := e.get(c); ce != nil && ce.suspect {
			ce.suspect = false
			e.enqueue(kData, c, it.init, skipIfGone)
		}
	}
	added := make([]string, 0, len(want))
	e.mu.RLock()
	for name := range want {
		if _, ok := cur.kids[name]; !ok {
			added = append(added, name)
		}
	}
	e.mu.RUnlock()
	sort.Strings(added)
	for _, name := range added {
		e.enqueue(kData, zkpath.Join(p, name), it.init, readAnyway)
	}
	return nil
}

// missing handles a read that found no node: the node in the view, if
// any, is gone, with its subtree. The root is then watched for its
// creation. Another node may be back already: a listing of its parent
// that the batch applied before this answer may have been answered after
// it (the order of a batch's reads is unknown) and after the node was
// created again, so it named the new incarnation and set the child
// watch after that creation: no event will tell, and the parent is
// listed again. (A listing of an earlier batch was answered before this
// read was sent: the node's deletion fires the child watch it set.)
func (e *engine) missing(ctx context.Context, it *item) error {
	p := it.key.path
	cached := e.cached(p)
	if err := e.remove(ctx, p); err != nil {
		return err
	}
	if p == e.root {
		e.enqueue(kExists, p, it.init, readAnyway)
		return nil
	}
	if parent, _ := zkpath.Split(p); cached && e.wasListed(parent) && e.cached(parent) {
		e.enqueue(kKids, parent, it.init, readAnyway)
	}
	return nil
}

func sortedKids(e *engine, en *entry) []string {
	e.mu.RLock()
	defer e.mu.RUnlock()
	names := make([]string, 0, len(en.kids))
	for name := range en.kids {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func (e *engine) applyExists(ctx context.Context, it *item, r result) error {
	p, ok, stat := it.key.path, r.found, r.stat
	cur := e.get(p)
	switch {
	case !ok:
		return e.remove(ctx, p) // the exists watch tells when it comes
	case cur != nil && cur.node.Stat.Czxid == stat.Czxid:
		return nil // still the node we have (the event was an older one's)
	}
	e.enqueueRoot(it.init)
	return nil
}

// remove takes p and its subtree out of the view, descendants first,
// reporting each node removed.
func (e *engine) remove(ctx context.Context, p string) error {
	cur := e.get(p)
	if cur == nil {
		return nil
	}
	for _, name := range sortedKids(e, cur) {
		if err := e.remove(ctx, zkpath.Join(p, name)); err != nil {
			return err
		}
	}
	e.touch(p)
	e.mu.Lock()
	delete(e.nodes, p)
	if p != e.root {
		parent, name := zkpath.Split(p)
		if pe := e.nodes[parent]; pe != nil {
			delete(pe.kids, name)
		}
	}
	e.mu.Unlock()
	if cur.hidden {
		return nil
	}
	return e.emit(ctx, Event{Type: EventRemoved, Node: cloneNode(cur.node)})
}

// emit sends ev, giving up when ctx ends.
func (e *engine) emit(ctx context.Context, ev Event) error {
	select {
	case e.out <- ev:
		e.emitted = true
		return nil
	case <-ctx.Done():
		return errStop
	}
}

func cloneNode(n Node) Node {
	n.Data = bytes.Clone(n.Data)
	return n
}

// The view's accessors, for any goroutine.

func (e *engine) node(p string) (Node, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	en := e.nodes[p]
	if en == nil || en.hidden {
		return Node{}, false
	}
	return cloneNode(en.node), true
}

func (e *engine) children(p string) ([]string, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	en := e.nodes[p]
	if en == nil {
		return nil, false
	}
	names := make([]string, 0, len(en.kids))
	for name := range en.kids {
		names = append(names, name)
	}
	slices.Sort(names)
	return names, true
}

func (e *engine) all() []Node {
	e.mu.RLock()
	out := make([]Node, 0, len(e.nodes))
	for _, en := range e.nodes {
		if !en.hidden {
			out = append(out, cloneNode(en.node))
		}
	}
	e.mu.RUnlock()
	slices.SortFunc(out, func(a, b Node) int { return strings.Compare(a.Path, b.Path) })
	return out
}
