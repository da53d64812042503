package cache

import (
	"context"
	"fmt"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// NodeCache keeps one node's data and stat: Curator's NodeCache. The node
// need not exist; the cache reports it when it is created (EventAdded),
// changed (EventUpdated) or deleted (EventRemoved).
//
// Cost: Watch reads the node (1 getData, and 1 exists more when it is
// missing). Then, per change: data set, 1 getData; deleted, 1 exists
// (which watches for its creation); created, 1 getData. A reconnection
// costs what Watch does, a session loss 1 sync more. One watch is set at a
// time: a data watch, or an exists watch while the node is missing.
//
// A NodeCache is safe for concurrent use.
type NodeCache struct {
	e *engine
}

// NewNodeCache returns a cache of the node at path. It sends nothing; Watch
// runs it. It fails with an error wrapping recipes.ErrNilSession, or
// recipes.ErrInvalidPath for an invalid path (recipes.ErrDataTooLarge when
// a read of it would exceed the session's request limit).
func NewNodeCache(s *recipes.Session, path string) (*NodeCache, error) {
	if err := check(s, path); err != nil {
		return nil, err
	}
	return &NodeCache{e: newEngine(s, path, config{kind: "node", rootData: true})}, nil
}

// Path returns the cached node's path.
func (c *NodeCache) Path() string { return c.e.root }

// Watch reads the node, then keeps the cache true until ctx ends or the
// stream is stopped, and streams what changes: EventAdded when the node is
// first read (nothing if it is missing), then EventInitialized, then
// EventAdded, EventUpdated and EventRemoved as the node changes, and
// EventReset after a session loss (then EventInitialized again once read).
// The cache's goroutine waits for the stream's reader: read it until it
// closes (Current moves with it). A cache starts once; a second Watch
// returns a stream that fails with ErrStarted. See the package doc for
// what the stream guarantees.
func (c *NodeCache) Watch(ctx context.Context) *recipes.Stream[Event] {
	if c == nil {
		return nilCache(ctx)
	}
	return c.e.start(ctx)
}

// Current returns the node as cached, and false when it is not (missing,
// or not read yet). The data is a copy. It sends nothing.
func (c *NodeCache) Current() (Node, bool) { return c.e.node(c.e.root) }

// check validates a cache's session and path.
func check(s *recipes.Session, path string) error {
	if s == nil {
		return fmt.Errorf("cache: %w", recipes.ErrNilSession)
	}
	if err := recipes.ValidatePath(path); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	if n := recipes.ReadSize(path); n > s.MaxData() {
		return fmt.Errorf("cache: %w: a read of %s is %d bytes, server limit %d", recipes.ErrDataTooLarge, path, n, s.MaxData())
	}
	return nil
}
