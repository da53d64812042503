// The engine's view: one entry per cached node, the run goroutine's
// lookups in it, and the accessors any goroutine may call (Node, Children,
// All), which return copies.

package cache

import (
	"bytes"
	"slices"
	"strings"
)

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
