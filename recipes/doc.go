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
// once queued, so ctx is checked before each request (a done ctx sends
// nothing) and honoured while waiting (for a watch or for a reconnection);
// a request already handed to go-zookeeper is waited for, so a call may
// return after ctx's deadline. There is no fixed bound on that wait: a sent
// request fails once no frame has come from the server for 2/3 of the
// session timeout (any frame, a ping reply or another answer, restarts
// that clock), and one queued while disconnected waits for go-zookeeper's
// reconnection attempts.
//
// When a call gives up because its ctx ended, its error wraps
// ContextError(ctx): errors.Is matches ctx.Err() (context.Canceled or
// context.DeadlineExceeded) and, when the caller gave one
// (context.WithCancelCause and the like), the cause too. The docs of every
// zkrecipes package call that error "ctx's error".
//
// # Watches
//
// WatchData, WatchExists and WatchChildren wait on one node: however many
// waiters subscribe and give up, the Session keeps one go-zookeeper watch
// per path and kind for them. A WatchSet (NewWatchSet) watches many nodes
// with no goroutine or channel per watch: its reads leave one-shot watches
// whose events come to one channel through the Session's event callback,
// and the Session keeps one go-zookeeper watch per path and kind for all
// its WatchSets. Package cache is built on it.
//
// Every watch of the Session, whoever set it (recipes or callers of
// Conn()), survives a reconnection under the same session: go-zookeeper
// sets it again on the new connection with the last zxid it saw, and the
// Session's frame tap makes sure that zxid is the one seen before the
// reconnection, never one of a reply on the new connection, which would
// keep the server from firing data and child changes made meanwhile
// (go-zookeeper v1.0.4 reads it too late; see tap.go). Cost: no request.
//
// # Security
//
// WithDigestAuth authenticates a Session (go-zookeeper sends its
// credentials again on every connection), WithTLS encrypts its
// connections, and WithACL and WithACLProvider set the ACL of every node
// the recipes create (Session.ACLFor). An authenticated Session creates its
// nodes with DefaultAuthACL unless told otherwise: its own principals may
// do everything on them, anyone may read them and list their children. A
// request the server refuses for want of permission fails with an error
// wrapping ErrNoAuth (and zk.ErrNoAuth); on a server that enforces
// authentication, a Session without credentials gets that refusal within
// about one reconnection (see ErrNoAuth). Before its first create under a
// parent, an authenticated Session reads the parent's ACL (1 getACL per
// parent and Session) and refuses to create under one that lets anyone
// create or delete children, where anyone could delete its nodes
// (ErrOpenParent; WithAllowOpenParents makes it a warning). The Session's
// logs and printed forms (LogValue, String) show no password.
//
// # Bad input
//
// The convention of every zkrecipes package: constructors validate their
// arguments once, send nothing and never panic, and return (T, error): an
// invalid argument is reported by the constructor, with no value, in an
// error wrapping ErrNilSession (a nil session), ErrInvalidPath (a bad path,
// or one in the reserved /zookeeper tree), ErrDataTooLarge (data or a path
// too large for a request) or ErrBadArgument (a count out of range, a
// dialect without the recipe's names, conflicting options), and possibly a
// more precise sentinel of the recipe's package. A session that is closed
// is reported by the methods as ErrClosed. A request larger than the
// server's limit (Session.MaxData; see RequestSize) is refused with
// ErrDataTooLarge before it is sent: the server would close the
// connection on it. A method called on a nil receiver may panic, as in
// package sync; so may a nil context, the same kind of programming error
// (the context package forbids it). No other runtime input panics.
package recipes
