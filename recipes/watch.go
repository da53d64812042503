package recipes

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/go-zookeeper/zk"
)

// The watch registry keeps at most one go-zookeeper watch per path and kind
// per Session and fans its event out to every waiter, without a goroutine
// per watch.
//
// Why one watch: go-zookeeper (v1.0.4) appends a channel to its watcher map
// for every GetW, ExistsW and ChildrenW that succeeds and drops the path's
// channels only when an event for that path arrives. A waiter that gives up
// (ctx done) cannot take its channel back, so every abandoned wait on a node
// that stays (a long holder) left one more channel behind, without bound.
// The server itself keeps one watch per path and connection, so one request
// per path is all the server ever sees anyway.
//
// How: the first waiter on a path sends the request and keeps its result;
// later waiters on the same path and kind subscribe to that watch without a
// request as long as it has not fired. The entry stays armed while its
// go-zookeeper channel is registered, whether or not anyone still waits, so
// a later waiter reuses it instead of adding a channel.
//
// Why no goroutine: go-zookeeper calls the Session's event callback with
// every watch event, on its receiving goroutine, in the order of the
// replies and events on the wire, before it fires its own channels. A reply
// that set a watch is handled (the watcher registered) before any event
// that follows it. So once a request's reply is in, every event for its
// path and kind that the callback sees from then on fires that watch, and
// the callback fires the entry itself: the go-zookeeper channel is never
// read (go-zookeeper buffers its one event and closes it). The one case
// the callback cannot decide is an event for the path that arrives while
// the request is in flight: it may have come before the reply (it then
// concerns an older watch) or after it. That entry (raced) hands the
// channel to a goroutine of the session's background, which ends when the
// event arrives or the Session is closed. A dropped watch (EventNotWatching:
// session expired, session closed) is an event like the others:
// subscribers see it and set the watch again, which arms a new entry.

// watchKind is the kind of watch an entry holds.
type watchKind uint8

const (
	watchData     watchKind = iota // GetW: data changed or node deleted
	watchExists                    // ExistsW: created, changed or deleted
	watchChildren                  // ChildrenW: a child added or removed, or node deleted
)

type watchKey struct {
	path string
	kind watchKind
}

// watchRegistry is the Session's one registry of watches, under one lock
// and fed by one event path (watchEvent): the armed entries of WatchData,
// WatchExists and WatchChildren, keyed by the request that set them, and
// the watches the WatchSets' reads rely on, keyed by go-zookeeper's kind
// of watch (watchset.go). The two keys differ because an exists request
// sets a data watch on an existing node (flightType, setType translate).
// Its zero value is ready to use.
type watchRegistry struct {
	mu sync.Mutex

	// The entries (this file).
	m      map[watchKey]*watchEntry
	closed bool // the Session is closed: every entry has fired

	// The WatchSets' part (watchset.go).
	armed   map[fanKey]int64 // watch set and not fired: the session id it was set under
	flights map[*fanFlight]struct{}
	sets    map[*WatchSet]struct{}
}

// watchEntry is one armed (or arming) watch.
type watchEntry struct {
	key   watchKey
	armed chan struct{} // closed once the request returned
	fired chan struct{} // closed once the event arrived
	// Set before armed is closed.
	sid      int64 // session the request was sent under
	err      error
	data     []byte
	stat     *zk.Stat
	children []string
	found    bool // watchExists only
	// Set before fired is closed.
	ev zk.Event
	// Guarded by the registry's mu.
	subs  int
	state entryState
	gz    fanType          // go-zookeeper's kind of the watch set (listening)
	raced bool             // arming: an event that may fire it arrived
	calls []func(zk.Event) // run once when it fires
}

// entryState says who will fire an entry.
type entryState uint8

const (
	entryArming    entryState = iota // request in flight
	entryListening                   // the event callback fires it
	entryDelegated                   // a goroutine reads go-zookeeper's channel (raced)
	entryFired                       // fired, or failed to arm
)

// flightType is the go-zookeeper kind whose events may fire the watch that
// k's request sets: for ExistsW the exist kind, whose events cover the data
// kind's (go-zookeeper sets a data watch when the node exists).
func (k watchKind) flightType() fanType {
	switch k {
	case watchData:
		return fanData
	case watchChildren:
		return fanChild
	}
	return fanExist
}

// setType is the go-zookeeper kind of the watch a successful request set.
func (e *watchEntry) setType() fanType {
	if e.key.kind == watchExists && e.found {
		return fanData
	}
	return e.key.kind.flightType()
}

// Watch is one waiter's subscription to the Session's single watch on a
// path (see Session.WatchData). Close it when no longer waiting; the watch
// itself stays set for the next waiter until its event arrives. A Watch is
// safe for concurrent use.
type Watch struct {
	s    *Session
	e    *watchEntry
	once sync.Once
}

// Fired returns a channel closed once the watch's event has arrived.
func (w *Watch) Fired() <-chan struct{} { return w.e.fired }

// Event returns the watch's event once Fired is closed (the zero Event
// before). An event of type zk.EventNotWatching means the watch was dropped
// (session expired or closed): set it again if still interested.
func (w *Watch) Event() zk.Event {
	select {
	case <-w.e.fired:
		return w.e.ev
	default:
		return zk.Event{}
	}
}

// Close ends the subscription. It sends nothing. Calling it again does
// nothing.
func (w *Watch) Close() {
	if w == nil {
		return
	}
	w.once.Do(func() {
		r := &w.s.watches
		r.mu.Lock()
		w.e.subs--
		r.mu.Unlock()
	})
}

// WatchData returns the data and stat of path and subscribes to the data
// watch the Session keeps on it, which fires when the node's data changes
// or the node is deleted. Cost: 1 getData setting the watch, or nothing when
// the Session already has a data watch on path that has not fired (the
// data and stat are then those read when it was set; a change since then
// fires it, though its event may still be on its way, notably just after a
// reconnection, while the watches go-zookeeper sets again have not fired
// yet: a caller that must know the node's state now reads it). The error
// wraps zk.ErrNoNode when the node does not exist (no
// watch is set), ctx's error when ctx is done before the answer (with a done
// ctx nothing is sent), or ErrClosed.
//
// However many waiters subscribe and give up, the Session holds at most one
// go-zookeeper watcher per path for data watches, and no goroutine per
// armed watch: its event callback fires them (see the registry's doc in
// watch.go for the one exception, a watch whose request raced an event on
// its path). Safe for concurrent use.
func (s *Session) WatchData(ctx context.Context, path string) ([]byte, *zk.Stat, *Watch, error) {
	w, _, err := s.watch(ctx, watchKey{path, watchData})
	if err != nil {
		return nil, nil, nil, err
	}
	return slices.Clone(w.e.data), cloneStat(w.e.stat), w, nil
}

// watchDataNow is WatchData with data read now: when the Session's data
// watch on path is already armed, it subscribes to it and reads the node
// without setting another watch (the armed one was set before this read,
// so it fires on any change after it). Cost: 1 getData either way. A
// holding's owner check after a suspension needs it: an armed entry's data
// may predate the suspension.
func (s *Session) watchDataNow(ctx context.Context, path string) ([]byte, *zk.Stat, *Watch, error) {
	w, sent, err := s.watch(ctx, watchKey{path, watchData})
	if err != nil || sent {
		if err != nil {
			return nil, nil, nil, err
		}
		return slices.Clone(w.e.data), cloneStat(w.e.stat), w, nil
	}
	data, st, err := s.conn.Get(path)
	if err != nil {
		w.Close()
		if !isConnErr(err) {
			err = fmt.Errorf("recipes: read %s: %w", path, serverErr(err))
		}
		return nil, nil, nil, err
	}
	return data, st, w, nil
}

// watchExistsNow is WatchExists with the answer read now (see
// watchDataNow): when the Session's exists watch on path is already armed,
// it subscribes to it and sends a plain exists. Cost: 1 exists either way.
// A claim's owner check after a create of unknown outcome needs it: an
// armed entry's answer may predate a reconnection whose re-set watches
// have not fired yet.
func (s *Session) watchExistsNow(ctx context.Context, path string) (bool, *zk.Stat, *Watch, error) {
	w, sent, err := s.watch(ctx, watchKey{path, watchExists})
	if err != nil {
		return false, nil, nil, err
	}
	if sent {
		return w.e.found, cloneStat(w.e.stat), w, nil
	}
	ok, st, err := s.conn.Exists(path)
	if err != nil {
		w.Close()
		if !isConnErr(err) {
			err = fmt.Errorf("recipes: read %s: %w", path, serverErr(err))
		}
		return false, nil, nil, err
	}
	return ok, st, w, nil
}

// WatchExists reports whether path exists (with its stat) and subscribes to
// the exists watch the Session keeps on it, which fires when the node is
// created, its data changes or it is deleted. Cost: 1 exists setting the
// watch, or nothing when the Session already has one armed on path (see
// WatchData). Same errors, goroutine-safety and bound as WatchData.
func (s *Session) WatchExists(ctx context.Context, path string) (bool, *zk.Stat, *Watch, error) {
	w, _, err := s.watch(ctx, watchKey{path, watchExists})
	if err != nil {
		return false, nil, nil, err
	}
	return w.e.found, cloneStat(w.e.stat), w, nil
}

// WatchChildren returns the children of path and subscribes to the child
// watch the Session keeps on it, which fires when a child is added or
// removed or path is deleted. Cost: 1 getChildren setting the watch, or
// nothing when the Session already has one armed on path (see WatchData).
// Same errors, goroutine-safety and bound as WatchData.
func (s *Session) WatchChildren(ctx context.Context, path string) ([]string, *zk.Stat, *Watch, error) {
	w, _, err := s.watch(ctx, watchKey{path, watchChildren})
	if err != nil {
		return nil, nil, nil, err
	}
	return slices.Clone(w.e.children), cloneStat(w.e.stat), w, nil
}

func cloneStat(st *zk.Stat) *zk.Stat {
	if st == nil {
		return nil
	}
	c := *st
	return &c
}

// watch subscribes to the armed entry for key, arming it first if there is
// none (or only one set under an older session); sent says it did.
func (s *Session) watch(ctx context.Context, key watchKey) (w *Watch, sent bool, err error) {
	if err := s.checkCtx(ctx); err != nil {
		return nil, false, err
	}
	if err := ValidatePath(key.path); err != nil {
		return nil, false, err
	}
	if err := ContextError(ctx); err != nil {
		return nil, false, err
	}
	r := &s.watches
	for {
		r.mu.Lock()
		e := r.m[key]
		var stale []func(zk.Event)
		var staleEv zk.Event
		if e != nil && e.isStale(s.ID()) {
			// Set under an older session: its event is moot, and it has
			// most likely been dropped already.
			delete(r.m, key)
			stale = r.fireLocked(e, notWatching(key.path, zk.ErrSessionExpired))
			staleEv, e = e.ev, nil
		}
		if e == nil {
			e = &watchEntry{key: key, armed: make(chan struct{}), fired: make(chan struct{}), subs: 1}
			if r.m == nil {
				r.m = make(map[watchKey]*watchEntry)
			}
			r.m[key] = e
			r.mu.Unlock()
			runCalls(stale, staleEv)
			s.arm(e)
			if e.err != nil {
				return nil, false, e.err
			}
			return &Watch{s: s, e: e}, true, nil
		}
		e.subs++
		r.mu.Unlock()
		w = &Watch{s: s, e: e}
		select {
		case <-e.armed:
		case <-ctx.Done():
			w.Close()
			return nil, false, ContextError(ctx)
		}
		if e.err != nil {
			w.Close()
			if isConnErr(e.err) {
				continue // that request failed in transit; try our own
			}
			return nil, false, e.err
		}
		return w, false, nil
	}
}

// isStale reports whether an armed entry was set under a session other than
// sid. Called with the registry's mu held.
func (e *watchEntry) isStale(sid int64) bool {
	select {
	case <-e.armed:
		return e.err == nil && e.sid != sid
	default:
		return false
	}
}

// arm sends e's request and leaves e to the event callback (or, when the
// request raced an event on its path, to a background goroutine reading
// go-zookeeper's channel). It closes e.armed; on failure e is removed.
func (s *Session) arm(e *watchEntry) {
	r := &s.watches
	e.sid = s.ID()
	var ch <-chan zk.Event
	switch e.key.kind {
	case watchData:
		e.data, e.stat, ch, e.err = s.conn.GetW(e.key.path)
	case watchExists:
		e.found, e.stat, ch, e.err = s.conn.ExistsW(e.key.path)
	case watchChildren:
		e.children, e.stat, ch, e.err = s.conn.ChildrenW(e.key.path)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	defer close(e.armed)
	if e.err == nil && r.closed {
		e.err = ErrClosed
	}
	if e.err == nil {
		e.gz = e.setType()
		if !e.raced {
			e.state = entryListening
			return
		}
		e.state = entryDelegated
		if s.background(func(bg context.Context) { s.deliver(bg, e, ch) }) {
			return
		}
		e.err = ErrClosed
	}
	if !isConnErr(e.err) && e.err != ErrClosed {
		e.err = fmt.Errorf("recipes: watch %s: %w", e.key.path, serverErr(e.err))
	}
	e.state = entryFired
	if r.m[e.key] == e {
		delete(r.m, e.key)
	}
}

// watchEvent is called by the Session's event callback for every event
// that is not a session event, on go-zookeeper's receiving goroutine,
// before go-zookeeper fires its own channels for it. Under the registry's
// lock it hands the event to the WatchSets (fanLocked), fires the
// listening entries it concerns and marks the arming ones it may concern
// as raced; then it runs the fired entries' calls. It never blocks (the
// entries' calls must not either).
func (s *Session) watchEvent(ev zk.Event) {
	types := fanTypes(ev.Type)
	if len(types) == 0 {
		return
	}
	r := &s.watches
	var calls []func(zk.Event)
	r.mu.Lock()
	r.fanLocked(ev, types)
	for kind := watchData; kind <= watchChildren; kind++ {
		e := r.m[watchKey{ev.Path, kind}]
		switch {
		case e == nil:
		case e.state == entryArming && hasType(types, kind.flightType()):
			e.raced = true
		case e.state == entryListening && hasType(types, e.gz):
			delete(r.m, e.key)
			calls = append(calls, r.fireLocked(e, ev)...)
		}
	}
	r.mu.Unlock()
	runCalls(calls, ev)
}

// deliver waits for a raced entry's event (or the session's close), removes
// e and wakes its subscribers.
func (s *Session) deliver(bg context.Context, e *watchEntry, ch <-chan zk.Event) {
	var ev zk.Event
	select {
	case got, ok := <-ch:
		ev = got
		if !ok {
			ev = notWatching(e.key.path, ErrClosed)
		}
	case <-bg.Done():
		ev = notWatching(e.key.path, ErrClosed)
	}
	r := &s.watches
	r.mu.Lock()
	if r.m[e.key] == e {
		delete(r.m, e.key)
	}
	calls := r.fireLocked(e, ev)
	r.mu.Unlock()
	runCalls(calls, ev)
}

// closeWatches fires every entry with EventNotWatching (ErrClosed) once the
// Session is closed; entries still arming fail with ErrClosed.
func (s *Session) closeWatches() {
	r := &s.watches
	var calls []func(zk.Event)
	r.mu.Lock()
	r.closed = true
	for k, e := range r.m {
		if e.state == entryListening || e.state == entryDelegated {
			delete(r.m, k)
			calls = append(calls, r.fireLocked(e, notWatching(k.path, ErrClosed))...)
		}
	}
	r.mu.Unlock()
	runCalls(calls, notWatching("", ErrClosed))
}

// fireLocked records ev as e's event, wakes e's subscribers and returns
// the calls to run (outside the lock) unless e has already fired. Called
// with the registry's mu held.
func (r *watchRegistry) fireLocked(e *watchEntry, ev zk.Event) []func(zk.Event) {
	if e.state == entryFired {
		return nil
	}
	e.state = entryFired
	e.ev = ev
	close(e.fired)
	calls := e.calls
	e.calls = nil
	return calls
}

// runCalls runs the calls of an entry that fired with ev.
func runCalls(calls []func(zk.Event), ev zk.Event) {
	for _, f := range calls {
		f(ev)
	}
}

func notWatching(path string, err error) zk.Event {
	return zk.Event{Type: zk.EventNotWatching, State: zk.StateDisconnected, Path: path, Err: err}
}

// OnFire runs f with the watch's event once it fires: at once, on the
// caller's goroutine, if it already has; otherwise on the goroutine that
// fires it (go-zookeeper's receiving goroutine, usually), so f must not
// block. It is how a holding follows its node with no goroutine of its
// own. Nothing happens for a nil w or f. Cost: no ZooKeeper calls.
func (w *Watch) OnFire(f func(zk.Event)) {
	if w == nil || f == nil {
		return
	}
	r := &w.s.watches
	r.mu.Lock()
	if w.e.state != entryFired {
		w.e.calls = append(w.e.calls, f)
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	f(w.e.ev)
}

// watchStats returns the number of armed (or arming) watches and their
// subscribers.
func (s *Session) watchStats() (armed, subs int) {
	r := &s.watches
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.m {
		armed++
		subs += e.subs
	}
	return armed, subs
}
