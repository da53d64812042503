package recipes

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"
)

// A WatchSet reads nodes, leaves a one-shot watch on each, and reports the
// events of all those watches through one channel: the many-paths
// counterpart of WatchData, WatchExists and WatchChildren, for a reader
// that watches thousands of nodes (a cache) without a goroutine or a
// channel per watch.
//
// How it works: go-zookeeper calls the Session's event callback with every
// watch event the connection receives, once per event, whoever set the
// watch. The Session hands each event to every open WatchSet, and a
// WatchSet keeps it only if one of its own reads left the watch it
// concerns and has not yet been reported (its interest: a path and a kind).
// The go-zookeeper channel each GetW, ExistsW or ChildrenW returns is not
// read at all: go-zookeeper buffers its one event and closes it.
//
// One watch per path and kind: the Session remembers, for all its
// WatchSets, which watches their reads have set and not yet seen fire
// (exactly: the remembered state changes in go-zookeeper's own order of
// replies and events). A read of a path whose watch of that kind is still
// set is sent without the watch flag, and is checked once its answer is in:
// if the watch fired meanwhile, the read is sent again with the flag. So
// however many times a node is read (after reconnections, by several
// WatchSets, by a WatchSet closed and opened again), go-zookeeper keeps at
// most one channel per path and kind for them, dropped when its event
// arrives or the session ends; the only exception is a read whose watch
// fired while it was in flight (it is then not remembered, and the next
// read of the path may set a second one, which the next event drops).
//
// Events are those of go-zookeeper (zk.Event): EventNodeCreated,
// EventNodeDataChanged, EventNodeChildrenChanged and EventNodeDeleted, and
// EventNotWatching when go-zookeeper drops its watches (the session
// expired or the Session was closed). After an event, read the path again
// to see its state and to watch it again. A WatchSet reports at most one
// event per path and kind between two reads of it, so the pending events
// are bounded by the paths read. Watches survive a reconnection under the
// same session: go-zookeeper sets them again on the new connection (with
// the last zxid it saw before it, which the Session's tap makes sure of,
// so the server fires those whose node changed meanwhile: see internal/tap); a
// read that failed with a connection error set no watch.
//
// Reads are single attempts: they check ctx (a done ctx sends nothing), the
// Session and the path, send one request (two when the watch fired in
// flight, as above), and return connection errors as they come; the caller
// retries.
//
// A WatchSet is safe for concurrent use. Close it when done: it then gets
// no more events; the watches it set stay until they fire or the session
// ends (go-zookeeper cannot remove a watch), and other WatchSets reuse
// them.
type WatchSet struct {
	s *Session

	mu       sync.Mutex
	interest map[fanKey]struct{} // watches our reads rely on whose event we have not reported
	events   []zk.Event
	ready    chan struct{} // capacity 1: events are pending
	closed   bool
}

// fanType is go-zookeeper's kind of watch: the key of its watcher map.
type fanType uint8

const (
	fanData  fanType = iota // GetW, or ExistsW on an existing node
	fanExist                // ExistsW on a missing node
	fanChild                // ChildrenW
)

type fanKey struct {
	path string
	typ  fanType
}

// fanFlight is a watch-setting read in flight.
type fanFlight struct {
	key   fanKey // for ExistsW, the exist key: its events cover the data key's
	fired bool   // an event for key arrived meanwhile
}

// fanTypes returns the kinds of watch an event fires, as go-zookeeper
// (v1.0.4, notifyWatches) clears them: every kind for EventNotWatching.
func fanTypes(t zk.EventType) []fanType {
	switch t {
	case zk.EventNodeCreated:
		return []fanType{fanExist}
	case zk.EventNodeDataChanged:
		return []fanType{fanExist, fanData}
	case zk.EventNodeChildrenChanged:
		return []fanType{fanChild}
	case zk.EventNodeDeleted, zk.EventNotWatching:
		return []fanType{fanExist, fanData, fanChild}
	}
	return nil
}

// fanLocked is watchEvent's part for the WatchSets: ev fires the watches
// of types on its path. Called with the registry's mu held; never blocks.
func (r *watchRegistry) fanLocked(ev zk.Event, types []fanType) {
	for _, t := range types {
		delete(r.armed, fanKey{ev.Path, t})
	}
	for f := range r.flights {
		if f.key.path == ev.Path && hasType(types, f.key.typ) {
			f.fired = true
		}
	}
	for w := range r.sets {
		w.deliver(ev, types)
	}
}

func hasType(ts []fanType, t fanType) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// isArmed reports whether k's watch is set under the current session sid.
func (r *watchRegistry) isArmed(k fanKey, sid int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return sid != 0 && r.armed[k] == sid
}

// armRead runs call, a WatchSet's watch-setting read, and remembers the
// watch it set (the key call returns; set false when it set none) unless
// an event that may have fired it arrived while it was in flight or the
// session changed.
func (r *watchRegistry) armRead(s *Session, flightKey fanKey, call func() (k fanKey, set bool, err error)) error {
	f := &fanFlight{key: flightKey}
	sid := s.ID()
	r.mu.Lock()
	if r.flights == nil {
		r.flights = make(map[*fanFlight]struct{})
	}
	r.flights[f] = struct{}{}
	r.mu.Unlock()
	k, set, err := call()
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.flights, f)
	if set && !f.fired && sid != 0 && s.ID() == sid {
		if r.armed == nil {
			r.armed = make(map[fanKey]int64)
		}
		r.armed[k] = sid
	}
	return err
}

// NewWatchSet returns an open WatchSet of the Session. It sends nothing. It
// fails with ErrNilSession or ErrClosed.
func (s *Session) NewWatchSet() (*WatchSet, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	w := &WatchSet{s: s, interest: make(map[fanKey]struct{}), ready: make(chan struct{}, 1)}
	r := &s.watches
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sets == nil {
		r.sets = make(map[*WatchSet]struct{})
	}
	r.sets[w] = struct{}{}
	return w, nil
}

// Ready returns a channel that receives a value when events are pending
// (take them with Events). One value stands for any number of events, and
// may find none left when an earlier call of Events took them: take the
// events, and wait again if there were none.
func (w *WatchSet) Ready() <-chan struct{} { return w.ready }

// Events returns the pending events, oldest first, and forgets them; nil
// when there are none. Each concerns a watch set by one of this WatchSet's
// reads: read its path again to see what changed and to watch it again.
func (w *WatchSet) Events() []zk.Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	evs := w.events
	w.events = nil
	return evs
}

// Close stops the WatchSet: it gets no more events and its pending ones
// are dropped. It sends nothing; the watches its reads set stay until they
// fire or the session ends. Calling it again does nothing.
func (w *WatchSet) Close() {
	if w == nil {
		return
	}
	r := &w.s.watches
	r.mu.Lock()
	delete(r.sets, w)
	r.mu.Unlock()
	w.mu.Lock()
	w.closed, w.interest, w.events = true, nil, nil
	w.mu.Unlock()
}

// deliver keeps ev if it fires a watch we rely on. Called with the
// registry's lock held; never blocks.
func (w *WatchSet) deliver(ev zk.Event, types []fanType) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	hit := false
	for _, t := range types {
		k := fanKey{ev.Path, t}
		if _, ok := w.interest[k]; ok {
			delete(w.interest, k)
			hit = true
		}
	}
	if !hit {
		return
	}
	w.events = append(w.events, ev)
	select {
	case w.ready <- struct{}{}:
	default:
	}
}

// want records that we rely on the watches of keys, before the read that
// sets or finds them is sent (so an event arriving during the read is
// kept).
func (w *WatchSet) want(keys ...fanKey) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	for _, k := range keys {
		w.interest[k] = struct{}{}
	}
}

// unwant forgets our interest in k when no watch of that key is set or
// being set (a read found no node, so set none), so that interest stays
// bounded by the watches that exist.
func (w *WatchSet) unwant(k fanKey) {
	r := &w.s.watches
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.armed[k]; ok {
		return
	}
	for f := range r.flights {
		if f.key.path == k.path {
			return
		}
	}
	w.mu.Lock()
	delete(w.interest, k)
	w.mu.Unlock()
}

// start checks what every read checks before sending: the Session, the
// path and ctx.
func (w *WatchSet) start(ctx context.Context, path string) error {
	if w == nil {
		return fmt.Errorf("%w: nil watch set", ErrBadArgument)
	}
	if err := w.s.checkCtx(ctx); err != nil {
		return err
	}
	if err := ValidatePath(path); err != nil {
		return err
	}
	w.mu.Lock()
	closed := w.closed
	w.mu.Unlock()
	if closed {
		return fmt.Errorf("%w: watch set closed", ErrBadArgument)
	}
	return ContextError(ctx)
}

func readErr(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("recipes: %s %s: %w", op, abridge(path), serverErr(err))
}

// GetData returns the data and stat of path and makes sure a data watch is
// set on it, which fires (EventNodeDataChanged, EventNodeDeleted) when the
// node's data changes or it is deleted. Cost: 1 getData (with the watch
// flag unless the Session has that watch set already); 2 when the watch
// fired while the first was in flight. The error wraps zk.ErrNoNode when
// the node does not exist (no watch is set: watch it with Exists), a
// connection error as go-zookeeper reported it, ErrClosed, ErrInvalidPath,
// or ctx's error (nothing sent).
func (w *WatchSet) GetData(ctx context.Context, path string) ([]byte, *zk.Stat, error) {
	if err := w.start(ctx, path); err != nil {
		return nil, nil, err
	}
	s, k := w.s, fanKey{path, fanData}
	w.want(k)
	if s.watches.isArmed(k, s.ID()) {
		data, stat, err := s.conn.Get(path)
		switch {
		case err == nil && s.watches.isArmed(k, s.ID()):
			return data, stat, nil
		case errors.Is(err, zk.ErrNoNode):
			w.unwant(k)
			return nil, nil, readErr("get", path, err)
		case err != nil:
			return nil, nil, readErr("get", path, err)
		}
		// The watch fired while the read was in flight: read again with it.
	}
	var data []byte
	var stat *zk.Stat
	err := s.watches.armRead(s, k, func() (fanKey, bool, error) {
		var err error
		data, stat, _, err = s.conn.GetW(path)
		return k, err == nil, err
	})
	if errors.Is(err, zk.ErrNoNode) {
		w.unwant(k)
	}
	if err != nil {
		return nil, nil, readErr("get", path, err)
	}
	return data, stat, nil
}

// Children returns the children of path (in the server's order) and its
// stat, and makes sure a child watch is set on it, which fires
// (EventNodeChildrenChanged, EventNodeDeleted) when a child is added or
// removed or the node is deleted. Cost and errors as for GetData (1
// getChildren).
func (w *WatchSet) Children(ctx context.Context, path string) ([]string, *zk.Stat, error) {
	if err := w.start(ctx, path); err != nil {
		return nil, nil, err
	}
	s, k := w.s, fanKey{path, fanChild}
	w.want(k)
	if s.watches.isArmed(k, s.ID()) {
		names, stat, err := s.conn.Children(path)
		switch {
		case err == nil && s.watches.isArmed(k, s.ID()):
			return names, stat, nil
		case errors.Is(err, zk.ErrNoNode):
			w.unwant(k)
			return nil, nil, readErr("get children", path, err)
		case err != nil:
			return nil, nil, readErr("get children", path, err)
		}
	}
	var names []string
	var stat *zk.Stat
	err := s.watches.armRead(s, k, func() (fanKey, bool, error) {
		var err error
		names, stat, _, err = s.conn.ChildrenW(path)
		return k, err == nil, err
	})
	if errors.Is(err, zk.ErrNoNode) {
		w.unwant(k)
	}
	if err != nil {
		return nil, nil, readErr("get children", path, err)
	}
	return names, stat, nil
}

// Exists reports whether path exists (with its stat) and makes sure a
// watch is set on it: on a missing node one that fires when it is created
// (EventNodeCreated), on an existing one the data watch of GetData. Cost: 1
// exists (2 as for GetData). Errors as for GetData, except that a missing
// node is not an error.
func (w *WatchSet) Exists(ctx context.Context, path string) (bool, *zk.Stat, error) {
	if err := w.start(ctx, path); err != nil {
		return false, nil, err
	}
	s := w.s
	kd, ke := fanKey{path, fanData}, fanKey{path, fanExist}
	w.want(kd, ke)
	if sid := s.ID(); s.watches.isArmed(kd, sid) || s.watches.isArmed(ke, sid) {
		ok, stat, err := s.conn.Exists(path)
		if err != nil {
			return false, nil, readErr("exists", path, err)
		}
		switch sid := s.ID(); {
		case ok && s.watches.isArmed(kd, sid):
			w.unwant(ke)
			return true, stat, nil
		case !ok && s.watches.isArmed(ke, sid):
			w.unwant(kd)
			return false, nil, nil
		}
	}
	var found bool
	var stat *zk.Stat
	err := s.watches.armRead(s, ke, func() (fanKey, bool, error) {
		var err error
		found, stat, _, err = s.conn.ExistsW(path)
		if found {
			return kd, err == nil, err
		}
		return ke, err == nil, err
	})
	if err != nil {
		return false, nil, readErr("exists", path, err)
	}
	if found {
		w.unwant(ke)
		return true, stat, nil
	}
	w.unwant(kd)
	return false, nil, nil
}

// fanStats returns the number of watches the WatchSets' reads have set and
// not seen fire, of their reads in flight, and of open WatchSets.
func (s *Session) fanStats() (armed, flights, sets int) {
	r := &s.watches
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.armed), len(r.flights), len(r.sets)
}
