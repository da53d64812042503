package cache

import (
	"context"
	"fmt"
	"math"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// TreeCache keeps a subtree: a root node and its descendants, with their
// data and stat, down to a depth limit and as far as a filter lets it:
// Curator's TreeCache. The root need not exist: when it is missing, or
// deleted, the cache watches for its creation.
//
// Cost: Watch reads every node (1 getData each) and lists every node above
// the depth limit (1 getChildren each), and 1 exists more when the root is
// missing. Then, per change: data set, 1 getData; a node created, 1
// getChildren of its parent + 1 getData (+ 1 getChildren when it is above
// the depth limit); a node deleted, 1 getChildren of its parent (a subtree
// deleted node by node costs at most that per node, less when the
// deletions come faster than the listings); the root deleted, 1 exists
// (which watches for its creation); the root created, what Watch costs.
// A reconnection costs what Watch does, a session loss 1 sync more.
// Watches: one data watch per node, one child watch per node above the
// depth limit, and an exists watch on the root while it is missing.
//
// A TreeCache is safe for concurrent use.
type TreeCache struct {
	e *engine
}

// TreeOption configures a TreeCache.
type TreeOption func(*treeConfig)

type treeConfig struct {
	maxDepth int
	filter   func(path string) bool
	err      error
}

// WithMaxDepth limits the cache to the nodes at most n levels below the
// root: 0 caches the root alone, 1 the root and its children. n must not
// be negative (recipes.ErrBadArgument). The default is no limit.
func WithMaxDepth(n int) TreeOption {
	return func(c *treeConfig) {
		if n < 0 {
			c.err = fmt.Errorf("cache: %w: max depth %d", recipes.ErrBadArgument, n)
			return
		}
		c.maxDepth = n
	}
}

// WithFilter caches only the descendants of the root whose full path f
// accepts, and nothing below a node it refuses (nothing is read or watched
// there). The root is always cached. f runs on the cache's goroutine and
// must be quick and pure: the same path must always get the same answer.
// A nil f is recipes.ErrBadArgument.
func WithFilter(f func(path string) bool) TreeOption {
	return func(c *treeConfig) {
		if f == nil {
			c.err = fmt.Errorf("cache: %w: nil filter", recipes.ErrBadArgument)
			return
		}
		c.filter = f
	}
}

// NewTreeCache returns a cache of the subtree at path. It sends nothing;
// Watch runs it. Errors as for NewNodeCache, and recipes.ErrBadArgument for
// a bad option.
func NewTreeCache(s *recipes.Session, path string, opts ...TreeOption) (*TreeCache, error) {
	if err := check(s, path); err != nil {
		return nil, err
	}
	tc := treeConfig{maxDepth: math.MaxInt}
	for _, o := range opts {
		if o != nil {
			o(&tc)
		}
		if tc.err != nil {
			return nil, tc.err
		}
	}
	return &TreeCache{e: newEngine(s, path, config{kind: "tree", rootData: true, maxDepth: tc.maxDepth, filter: tc.filter})}, nil
}

// Path returns the root's path.
func (c *TreeCache) Path() string { return c.e.root }

// Watch reads the subtree, then keeps the cache true until ctx ends or the
// stream is stopped, and streams what changes: EventAdded per node read
// (each parent before its children), EventInitialized once all are, then
// EventAdded, EventUpdated and EventRemoved as nodes come, change and go
// (descendants removed before their parent), and EventReset after a
// session loss (then EventInitialized again once all are read). The
// cache's goroutine waits for the stream's reader: read it until it closes
// (the view moves with it). A cache starts once (ErrStarted). See the
// package doc for what the stream guarantees.
func (c *TreeCache) Watch(ctx context.Context) *recipes.Stream[Event] {
	if c == nil {
		return nilCache(ctx)
	}
	return c.e.start(ctx)
}

// Get returns the cached node at path (a full path), and false when it is
// not cached. The data is a copy. It sends nothing.
func (c *TreeCache) Get(path string) (Node, bool) { return c.e.node(path) }

// Children returns the names of the cached children of the node at path,
// sorted, and false when that node is not cached. It sends nothing.
func (c *TreeCache) Children(path string) ([]string, bool) { return c.e.children(path) }

// Nodes returns every cached node, sorted by path (so each parent comes
// before its descendants). The data are copies. It sends nothing.
func (c *TreeCache) Nodes() []Node { return c.e.all() }
