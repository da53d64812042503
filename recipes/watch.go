package recipes

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/go-zookeeper/zk"
)

// The watch registry keeps at most one go-zookeeper watch per path and kind
// per Session and fans its event out to every waiter.
//
// Why: go-zookeeper (v1.0.4) appends a channel to its watcher map for every
// GetW, ExistsW and ChildrenW that succeeds and drops the path's channels
// only when an event for that path arrives. A waiter that gives up (ctx
// done) cannot take its channel back, so every abandoned wait on a node that
// stays (a long holder) left one more channel behind, without bound. The
// server itself keeps one watch per path and connection, so one request per
// path is all the server ever sees anyway.
//
// How: the first waiter on a path sends the request and keeps its result;
// later waiters on the same path and kind subscribe to that watch without a
// request as long as it has not fired. The entry stays armed while its
// go-zookeeper channel is registered, whether or not anyone still waits, so
// a later waiter reuses it instead of adding a channel. One goroutine of the
// session's background per armed entry receives the event, removes the
// entry and wakes every subscriber. A dropped watch (EventNotWatching:
// session expired, session closed) is an event like the others: subscribers
// see it and set the watch again, which arms a new entry.

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

// watchRegistry is the Session's set of armed watches; its zero value is
// ready to use.
type watchRegistry struct {
	mu sync.Mutex
	m  map[watchKey]*watchEntry
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
	subs int
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
// fires it). The error wraps zk.ErrNoNode when the node does not exist (no
// watch is set), ctx's error when ctx is done before the answer (with a done
// ctx nothing is sent), or ErrClosed.
//
// However many waiters subscribe and give up, the Session holds at most one
// go-zookeeper watcher per path for data watches, and one goroutine of its
// background per armed watch, which ends when the event arrives or the
// Session is closed. Safe for concurrent use.
func (s *Session) WatchData(ctx context.Context, path string) ([]byte, *zk.Stat, *Watch, error) {
	w, err := s.watch(ctx, watchKey{path, watchData})
	if err != nil {
		return nil, nil, nil, err
	}
	return slices.Clone(w.e.data), cloneStat(w.e.stat), w, nil
}

// WatchExists reports whether path exists (with its stat) and subscribes to
// the exists watch the Session keeps on it, which fires when the node is
// created, its data changes or it is deleted. Cost: 1 exists setting the
// watch, or nothing when the Session already has one armed on path (see
// WatchData). Same errors, goroutine-safety and bound as WatchData.
func (s *Session) WatchExists(ctx context.Context, path string) (bool, *zk.Stat, *Watch, error) {
	w, err := s.watch(ctx, watchKey{path, watchExists})
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
	w, err := s.watch(ctx, watchKey{path, watchChildren})
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
// none (or only one set under an older session).
func (s *Session) watch(ctx context.Context, key watchKey) (*Watch, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := ValidatePath(key.path); err != nil {
		return nil, err
	}
	if err := ContextError(ctx); err != nil {
		return nil, err
	}
	r := &s.watches
	for {
		r.mu.Lock()
		e := r.m[key]
		if e != nil && e.isStale(s.ID()) {
			delete(r.m, key) // set under an older session: its event is moot
			e = nil
		}
		if e == nil {
			e = &watchEntry{key: key, armed: make(chan struct{}), fired: make(chan struct{}), subs: 1}
			if r.m == nil {
				r.m = make(map[watchKey]*watchEntry)
			}
			r.m[key] = e
			r.mu.Unlock()
			s.arm(e)
			if e.err != nil {
				return nil, e.err
			}
			return &Watch{s: s, e: e}, nil
		}
		e.subs++
		r.mu.Unlock()
		w := &Watch{s: s, e: e}
		select {
		case <-e.armed:
		case <-ctx.Done():
			w.Close()
			return nil, ContextError(ctx)
		}
		if e.err != nil {
			w.Close()
			if isConnErr(e.err) {
				continue // that request failed in transit; try our own
			}
			return nil, e.err
		}
		return w, nil
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

// arm sends e's request and, when it set a watch, hands the event channel
// to a background goroutine. It closes e.armed; on failure e is removed.
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
	if e.err == nil && !s.background(func(bg context.Context) { s.deliver(bg, e, ch) }) {
		e.err = ErrClosed
	}
	if e.err != nil {
		if !isConnErr(e.err) && e.err != ErrClosed {
			e.err = fmt.Errorf("recipes: watch %s: %w", e.key.path, e.err)
		}
		r.mu.Lock()
		if r.m[e.key] == e {
			delete(r.m, e.key)
		}
		r.mu.Unlock()
	}
	close(e.armed)
}

// deliver waits for e's event (or the session's close), removes e and
// wakes its subscribers.
func (s *Session) deliver(bg context.Context, e *watchEntry, ch <-chan zk.Event) {
	var ev zk.Event
	select {
	case got, ok := <-ch:
		ev = got
		if !ok {
			ev = zk.Event{Type: zk.EventNotWatching, State: zk.StateDisconnected, Path: e.key.path, Err: ErrClosed}
		}
	case <-bg.Done():
		ev = zk.Event{Type: zk.EventNotWatching, State: zk.StateDisconnected, Path: e.key.path, Err: ErrClosed}
	}
	r := &s.watches
	r.mu.Lock()
	if r.m[e.key] == e {
		delete(r.m, e.key)
	}
	e.ev = ev
	close(e.fired)
	r.mu.Unlock()
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
