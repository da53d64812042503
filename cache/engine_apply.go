// How the engine applies a batch's answers to the view, in queue order:
// data, listings and the root's existence, what counts as a new
// incarnation of a path, removals, and the events each change emits.

package cache

import (
	"context"
	"errors"
	"sort"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

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
