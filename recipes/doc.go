// Package recipes is the foundation of the zkrecipes toolkit: a Session that
// owns one go-zookeeper connection and reports its state, ZooKeeper path
// validation, the sequential-node contender core shared by locks,
// semaphores, read/write locks and elections, wire dialects, and fencing.
//
// # Usage
//
//	s, err := recipes.Connect(ctx, servers)          // one Session per process; options: WithSessionTimeout, ...
//	defer s.Close()                                  // ends the session: its ephemeral nodes go with it
//	h, err := recipes.Acquire(ctx, s, recipes.Spec{Path: "/app/locks/report"}) // 1 create + 1 getChildren
//	defer h.Release(ctx)                             // 1 delete
//	select { case <-h.Context().Done(): return context.Cause(h.Context()); default: } // act only while held
//	_, err = h.FencedMulti(ctx, &zk.SetDataRequest{Path: "/app/report", Data: b, Version: -1}) // ErrFenced once it may be lost
//	sub := s.Subscribe()                             // state changes: Connected, Suspended, Reconnected, Lost, Closed
//
// ExampleAcquire has it in full, compiled (example_test.go; go doc does not
// print examples). Most programs use the recipe packages built on this one
// (lock, leader, rwlock, ...), whose holdings have the same shape (Held).
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
// # The call layer
//
// The recipes of this module (barrier, queue, twophase, shared, ...) make
// their own requests through the same public functions a recipe written
// outside it can use: Do and Exec send a call once the Session is usable
// and again after a connection error, until it gets an answer or ctx ends
// (Stopped tells the two apart); CreateUnder is the one create under a
// parent (the squatting check, the create, the parents on zk.ErrNoNode);
// Session.DeleteOwned deletes a node only while it is ours;
// Session.CreateProtected is the protected create of the contender core.
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
// (go-zookeeper v1.0.4 reads it too late; see internal/tap). Cost: no request.
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
// # Conventions
//
// Every zkrecipes package follows these rules; their docs link here
// instead of restating them.
//
//   - Ctx first: a function or method that may send takes a
//     context.Context as its first argument. A done ctx sends nothing and
//     the call returns ctx's error (see above).
//   - Sentinel errors: every error wraps a sentinel of its package or of
//     this one (or go-zookeeper's); test with errors.Is, never by text.
//   - Constructors validate and send nothing: New, NewX and NewXCache take
//     no ctx, check their arguments once, start no goroutine and return
//     (T, error), with no value when an argument is bad. Functions that
//     take a ctx and return a live value (group.Join, Discovery.Register,
//     Election.Campaign, Acquire, ...) are not
//     constructors in this sense: they send, and may start goroutines
//     that end with the value (its Close, Release or Leave, or its
//     Session's Close).
//   - Bad input returns an error and sends nothing: a nil session is
//     ErrNilSession, a bad path (or one in the reserved /zookeeper tree)
//     ErrInvalidPath, data or a path too large for a request
//     ErrDataTooLarge (refused before it is sent, see RequestSize: the
//     server would close the connection on it), anything else
//     ErrBadArgument (a count out of range, a dialect without the recipe's
//     names, conflicting options), possibly with a more precise sentinel
//     of the recipe's package. A closed Session is ErrClosed. No runtime
//     input (paths, data, counts, names, server answers) panics.
//   - Nil receivers: a method with a pointer receiver that returns an
//     error or a Stream returns, on a nil receiver, an error wrapping
//     ErrBadArgument (and the package's nil-receiver sentinel, such as
//     lock.ErrNilReceiver or ErrNilSession; a Stream ends with it), and
//     sends nothing. Other methods (accessors such as Path, Context, Fence
//     and Err) may panic on a nil receiver, as in package sync.
//   - Verbs: a Stream comes from Watch when it observes (the caches,
//     group.Watch, leader.Election.Watch, shared.Value.Watch,
//     discovery.Provider.Watch) and from Run when it takes part
//     (partition.Partitioner.Run, twophase.Site.Run; leader.Run is the
//     loop form). A value that keeps working in the background begins
//     with Start(ctx) (persistent.Node); a presence ends with
//     Leave(ctx) (group.Member, discovery.Registration, persistent.Node);
//     a holding with Release (or its recipe's Unlock).
//   - Nil ctx: a function or method given a nil context.Context (package
//     context forbids one) returns ErrNilContext, which wraps
//     ErrBadArgument (a Stream ends with it), sends nothing and changes
//     nothing: a holding's Release or Unlock with a nil ctx keeps the
//     holding. It never panics.
package recipes
