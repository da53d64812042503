// Package recipes is the foundation of the zkrecipes toolkit: a Session that
// owns one go-zookeeper connection and reports its state, ZooKeeper path
// validation, the sequential-node contender core shared by locks,
// semaphores, read/write locks and elections, wire dialects, and fencing.
//
// # Sessions
//
// Connect creates the *zk.Conn itself so that no event is ever dropped (it
// installs zk.WithEventCallback and drains go-zookeeper's 6-slot event
// channel). The Session maps go-zookeeper's events onto Curator-like states:
// Connected, Suspended (connection lost, session may live), Reconnected
// (same session back), Lost (session expired, or replaced by a new session
// id: go-zookeeper silently opens a new session on the same *zk.Conn after
// expiry) and Closed.
//
// # Contenders
//
// Acquire creates a protected ephemeral sequential node under a parent path
// (Curator: "_c_<uuid36>-<label><seq10>"), orders the parent's recognised
// children by their sequence numbers with RFC 1982 serial arithmetic, and
// asks a Predicate whether it holds or which single node to watch. It waits
// with a data watch on that one node only, so a release wakes at most one
// waiter. The result is a Holding: its Context is cancelled, with a cause
// that errors.Is one of this package's sentinels, the moment the holding
// may be lost; its Fence carries the node's czxid for fenced writes.
//
// Calls to ZooKeeper take a context. go-zookeeper cannot abandon a request
// once queued, so ctx is checked before each request and honoured while
// waiting (for a watch or for a reconnection); one request in flight always
// completes or fails within the connection's receive timeout (2/3 of the
// session timeout).
package recipes
