// Package cache keeps local, read-only copies of ZooKeeper data and keeps
// them true under faults: NodeCache (one node's data and stat, Curator's
// NodeCache), ChildrenCache (a node's children with their data, Curator's
// PathChildrenCache) and TreeCache (a subtree, with a depth limit and a
// filter, Curator's TreeCache). The caches only read: they never create,
// change or delete a node, the parents of their root included.
//
// # Usage
//
//	c, err := cache.NewChildrenCache(s, "/app/workers") // sends nothing
//	events := c.Watch(ctx)                              // ends when ctx does
//	go func() {
//		for range events.C { } // the cache waits for its reader: drain the stream
//	}()
//	for _, w := range c.Current() { ... }  // from any goroutine
//
// ExampleChildrenCache has it in full, compiled; ExampleNodeCache and
// ExampleTreeCache show the others (example_test.go).
//
// # Using a cache
//
// A constructor checks its arguments and sends nothing. Watch(ctx) reads
// the data, then keeps it true, and returns a recipes.Stream of Events:
// EventAdded for each node of the first snapshot, EventInitialized, then
// EventAdded, EventUpdated and EventRemoved as nodes come, change and go,
// and EventReset when the session is lost (followed by the differences
// and EventInitialized once everything is read again). The view (Current,
// Get, Children, Nodes) can be read from any goroutine at any time.
//
// The events come on a recipes.Stream, as leader.Election.Watch and
// shared.Value.Watch deliver theirs, rather than through listeners: the
// reader sets the pace, ends the cache with its ctx or Stop, and learns why
// the stream ended from Err; no reader code runs on the cache's goroutine.
// Read the stream until it closes: the cache's goroutine waits for the
// reader (see Backpressure). A reader that only wants the view still has
// to drain it (for range events.C {}).
//
// # What the stream guarantees
//
// Order: events come in the order the cache applied them to its view, and
// the view already includes each event when it is received (it may be
// ahead of the reader by the one event being sent, never more). For each
// path, EventAdded and EventRemoved alternate, with EventUpdated only in
// between; a parent is added before its children and removed after them.
//
// Never back: for each path, every EventAdded and EventUpdated carries a
// larger Stat.Mzxid than every earlier event of that path, across
// incarnations (a node deleted and created again has a larger Stat.Czxid,
// and its Version starts again at 0: EventRemoved then EventAdded), across
// reconnections and across session losses. After a session loss the cache
// syncs before reading again: go-zookeeper forgets the last zxid it saw when
// its session expires, so its new session's server is not checked against
// it; a global session is created by a transaction that its server applies
// first, which keeps that server abreast of what the old session read, but
// a local session (an ensemble with localSessionsEnabled) is not, and its
// server may be behind.
// EventUpdated always concerns the incarnation the path holds.
//
// Convergence: once ZooKeeper stops changing and the session is usable,
// the view equals the watched data as ZooKeeper has it after a bounded
// number of round trips (see Costs), whatever happened before:
// disconnections, session losses, nodes created and deleted during the
// first snapshot, a root created and deleted again and again.
//
// What a reader may miss: go-zookeeper has one-shot watches only (no
// persistent or recursive watches, ZooKeeper's AddWatch). A watch fires
// once, and the read that follows the event also sets it again, so the
// changes made between the event and that read are seen as one: the
// reader gets the latest value, and may miss the values in between, never
// the last one. A node created and deleted between two reads of its parent
// may not be reported at all; one deleted and created again is reported as
// removed and added.
//
// Backpressure: the cache sends each event and waits until the reader
// takes it; meanwhile it reads nothing, and changes accumulate in
// ZooKeeper, not in memory. When the reader takes the event, the cache
// reads the current state of what changed: the intermediate values are
// coalesced as above.
//
// Faults: while the session is disconnected (recipes.StateSuspended) the
// view stays as it was. When the same session comes back, the cache reads
// every cached node and listing again and reports the differences: a read
// that failed with the connection set no watch, and go-zookeeper restores
// the watches it had with the last zxid it saw, which a reply to a request
// sent right after the reconnection may already have moved past (its
// re-registration runs concurrently with new requests; the cache waits a
// moment, 100 ms or until the next state change, before it reads again,
// to let it go first). The re-read costs no new watch where one is still
// set (see recipes.WatchSet). When the
// session is lost (expired, replaced, or its lease ran out), the cache
// reports EventReset and keeps its view; once a session is usable again it
// syncs, reads everything, reports the differences (the lost session's
// ephemeral nodes are removed) and then EventInitialized.
//
// The stream ends, and the view stays as it was, when ctx ends (Err is
// ctx's error), when Stop is called (Err is nil), when the Session is
// closed (an error wrapping recipes.ErrClosed), or when the server refuses
// a read for another reason than a missing node, such as zk.ErrNoAuth (the
// cache could no longer be true; Err wraps the server's error). A done ctx
// sends nothing.
//
// # Costs
//
// Each change costs the reads that find out what it was, as its watch
// event arrives (NodeCache, ChildrenCache and TreeCache alike):
//
//   - a cached node's data set: 1 getData;
//   - a node created under a listed node: 1 getChildren of the parent and 1
//     getData (and 1 getChildren of the new node if it is above the depth
//     limit);
//   - a node deleted: 1 getChildren of its parent (its deletion fires the
//     parent's child watch, whose listing tells whether it is gone, or
//     back: then 1 getData tells the incarnation); a subtree deleted node
//     by node costs at most that per node, less when the deletions come
//     faster than the listings;
//   - the root deleted: 1 exists, which watches for its creation; the root
//     created: 1 getData (a ChildrenCache: 1 getChildren) and the reads of
//     its children.
//
// Changes that come faster than the reads are coalesced, and cost less.
// Watch costs 1 getData per cached node and 1 getChildren per listed node
// (a node above the depth limit; a ChildrenCache lists its parent only and
// reads no data of it), and 1 exists when the root is missing. A
// reconnection costs the same again, a session loss 1 sync more. A cache
// keeps one data watch per cached node, one child watch per listed node,
// and one exists watch on a missing root; the Session keeps at most one
// go-zookeeper watch per path and kind for all its caches together, so a
// cache started again on the same nodes sets none.
//
// # Memory and goroutines
//
// Memory is bounded by the cached data: the view (paths, data and stats),
// at most two queued reads per cached node and one for the root, and at
// most one pending watch event per watch. A running cache has one
// goroutine, its stream's producer, and none per node: watch events reach
// it through the Session's event callback (recipes.WatchSet). It sends the
// queued reads in batches of up to 16, each read on a goroutine of its own
// until its answer is in (go-zookeeper pipelines them on the connection),
// and applies the answers in queue order; an answer about a node that an
// earlier answer of the batch changed is read again. A node's new
// incarnation created after the last read of its parent is not applied:
// the parent is listed again first, so that a child of a parent deleted
// and created again never enters the view under the old parent (rare: it
// takes a change between a listing and the reads it queues). The cache's
// goroutine ends, and the cache leaves nothing behind, when the stream
// ends; the watches it set stay with the Session until they fire, for the
// next cache of the same nodes to use.
//
// Caches are safe for concurrent use: the view may be read from any
// goroutine while the stream runs.
//
// # Permissions
//
// READ on the root and on every node cached; nothing else: a cache never
// writes, not even its root's parents. See docs/security.md.
//
// Bad input, nil receivers and nil contexts follow the conventions of
// every zkrecipes package (see "Conventions" in package recipes): Watch on
// a nil cache returns a Stream that ends with an error wrapping
// recipes.ErrBadArgument.
package cache
