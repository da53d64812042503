package cache

import (
	"context"
	"fmt"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// ChildrenCache keeps the children of one node, with their data and stat:
// Curator's PathChildrenCache. The parent itself is not cached (its data
// is not read) and need not exist: when it is missing, or deleted, the
// cache watches for its creation.
//
// Cost: Watch lists the parent (1 getChildren, and 1 exists more when it
// is missing) and reads each child (1 getData each). Then, per change: a
// child's data set, 1 getData; a child created, 1 getChildren + 1 getData;
// a child deleted, 1 getChildren; the parent deleted, 1 exists (which
// watches for its creation); the parent created, 1 getChildren + 1 getData
// per child. Changes below the children cost nothing. A reconnection costs
// what Watch does, a session loss 1 sync more. Watches: one child watch on
// the parent (an exists watch while it is missing) and one data watch per
// child.
//
// A ChildrenCache is safe for concurrent use.
type ChildrenCache struct {
	e *engine
}

// ChildrenOption configures a ChildrenCache.
type ChildrenOption func(*childrenConfig)

type childrenConfig struct {
	filter func(path string) bool
	err    error
}

// WithChildFilter caches only the children whose full path f accepts: the
// others are neither read nor watched, though they are listed (a child
// refused coming or going costs the parent's listing, 1 getChildren). f
// runs on the cache's goroutine and must be quick and pure: the same path
// must always get the same answer. A nil f is recipes.ErrBadArgument.
func WithChildFilter(f func(path string) bool) ChildrenOption {
	return func(c *childrenConfig) {
		if f == nil {
			c.err = fmt.Errorf("cache: %w: nil filter", recipes.ErrBadArgument)
			return
		}
		c.filter = f
	}
}

// NewChildrenCache returns a cache of the children of the node at path. It
// sends nothing; Watch runs it. Errors as for NewNodeCache, and
// recipes.ErrBadArgument for a bad option.
func NewChildrenCache(s *recipes.Session, path string, opts ...ChildrenOption) (*ChildrenCache, error) {
	if err := check(s, path); err != nil {
		return nil, err
	}
	var cc childrenConfig
	for _, o := range opts {
		if o != nil {
			o(&cc)
		}
		if cc.err != nil {
			return nil, cc.err
		}
	}
	return &ChildrenCache{e: newEngine(s, path, config{kind: "children", maxDepth: 1, filter: cc.filter})}, nil
}

// Path returns the parent's path.
func (c *ChildrenCache) Path() string { return c.e.root }

// Watch reads the children, then keeps the cache true until ctx ends or
// the stream is stopped, and streams what changes: EventAdded per child
// read, EventInitialized once all are, then EventAdded, EventUpdated and
// EventRemoved as children come, change and go, and EventReset after a
// session loss (then EventInitialized again once all are read). The
// cache's goroutine waits for the stream's reader: read it until it closes
// (the view moves with it). A cache starts once (ErrStarted). See the
// package doc for what the stream guarantees.
func (c *ChildrenCache) Watch(ctx context.Context) *recipes.Stream[Event] {
	if c == nil {
		return nilCache(ctx)
	}
	return c.e.start(ctx)
}

// Current returns the cached children, sorted by path. The data are
// copies. It sends nothing.
func (c *ChildrenCache) Current() []Node { return c.e.all() }

// Get returns the cached child at path (a full path), and false when it is
// not cached. The data is a copy. It sends nothing.
func (c *ChildrenCache) Get(path string) (Node, bool) { return c.e.node(path) }
