// Package rwlock provides RWMutex, the shared read / exclusive write lock of
// ZooKeeper's recipes, on the recipes contender core, wire-compatible with
// Apache Curator's InterProcessReadWriteLock (default) or kazoo's ReadLock
// and WriteLock (WithDialect(recipes.Kazoo)), with write-to-read downgrade
// and opt-in revocation (the "recoverable shared lock").
//
// # Usage
//
//	rw, err := rwlock.New(s, "/app/locks/catalog") // one RWMutex per would-be holder; sends nothing
//	r := rw.Reader()                              // the read side, with lock.Mutex's methods
//	err = r.Lock(ctx)                             // shared with other readers
//	defer r.Unlock(ctx)
//	<-r.Context().Done()                          // the read lock may be lost
//	w, err := rwlock.New(s, "/app/locks/catalog") // another holder's RWMutex:
//	err = w.Lock(ctx)                             // the exclusive side (w.Writer() is its view)
//
// ExampleRWMutex has it in full, compiled; ExampleRWMutex_downgrade shows a write
// lock turned into a read lock (example_test.go).
//
// # Protocol
//
// Readers and writers create protected ephemeral sequential nodes under one
// path, which share the parent's sequence counter and so form one fair
// queue, ordered by the digits after the marker ("__READ__" / "__WRIT__",
// or "__rlock__" / "__lock__") with RFC 1982 serial arithmetic. A reader
// holds when no writer is ahead of it and otherwise watches the nearest
// writer ahead; a writer holds when first and otherwise watches the node
// right ahead of it. Nodes of other names under the path are ignored,
// except that in the kazoo dialect a kazoo Lock ("__lock__") is a writer,
// as it is for kazoo.
//
// # Watchers woken per release
//
// Every watch is a data watch on one node, never on the parent, and every
// woken process then holds, or looks again at what is ahead of it (1
// getData per node with two or fewer ahead, else 1 getChildren; a writer
// in the Curator dialect that finds nothing of its listing left ahead
// lists once more before it holds, see below):
//
//   - a writer's release wakes either the one writer queued right behind
//     it, or every reader queued between it and the next writer (they all
//     hold at once); the writer behind those readers watches the last of
//     them and is not woken;
//   - a reader's release wakes at most one process: the writer queued right
//     behind it, if any. Readers never watch readers, so a waiting reader
//     is woken at most once per writer ahead of it (normally once: when
//     the nearest one leaves), not once per queued node.
//
// # ZooKeeper calls
//
// Each row holds for both sides (the RWMutex's own methods, the Writer's,
// and the Reader's).
//
//	Lock uncontended          1 create + 1 getChildren, + 1 getData on our node (czxid, see below)
//	Lock contended            + 1 getData per node watched; when a watched node goes and
//	                          more than two were ahead, + 1 getChildren instead of walking
//	Lock woken, Curator       + 1 getChildren before holding, when nothing of its listing
//	                          is left ahead (kazoo dialect, Reader: none)
//	TryLock                   1 getChildren when it would block (no write);
//	                          else 1 getChildren + 1 create + 1 getChildren (+ 1 getData)
//	Reader().Lock, writing    1 create + 1 getData (downgrade, no wait), + 1 getData in
//	                          the background to watch the write node, unless watched
//	Unlock                    1 delete
//	Unlock, not held          nothing (ErrNotHeld)
//	Unlock after a downgrade  1 getChildren + 1 delete (no delete if the write node is kept)
//	Context                   first call: 1 getData in the background to watch our node,
//	                          unless watched
//
// The getData on our own node after an acquisition reads its czxid (the
// fencing token) and is skipped when the listing proves it (the core's
// shortcut, which only applies while no child of the path was ever
// deleted) unless WithRevocation is set. A waiting acquisition lists the
// path again when a node it watched went while more than two others were
// ahead of it (one listing then replaces a getData per departed node),
// when the session is lost, and, for a writer in the Curator dialect,
// before it concludes that it holds: since Curator 5.5 (CURATOR-621) a
// writer's downgrade creates a read node without a sequence of its own,
// named after its write node's sequence, and then deletes that write node,
// so a node can appear ahead of writers already queued, and the writer
// woken by that delete must not trust the list it has. A reader may: such
// nodes are readers, and every other node is sequential and sorts after
// it.
//
// # Downgrade and upgrade
//
// As with Curator, Reader().Lock while holding the write lock succeeds at
// once, and the following Unlock keeps the read holding. Unlike Curator, it
// stays safe when writers were already queued behind our write node: Unlock
// then keeps that node until Reader().Unlock, so they cannot hold while we
// read (see
// RWMutex.Unlock). Upgrading (Lock while holding only the read lock)
// returns ErrUpgrade instead of deadlocking.
//
// # Holdings
//
// Each side is a View with lock.Mutex's methods: Reader() for the read
// lock, Writer() for the write lock, whose methods are also the RWMutex's
// own (Lock, Unlock, Context, ...). Each
// holding (Context, Fence, Revoked, Node, FencedMulti, Unlock: the methods
// of recipes.Held) exposes a context cancelled, with a cause that
// errors.Is a recipes sentinel, the moment it may be lost, and a fencing
// token (our node's czxid) for fenced writes that
// ZooKeeper itself rejects once the holding is gone. Both sides' Unlock
// answer as every Release does (see recipes.Held.Release): nil only when
// they released a live holding; otherwise an error that errors.Is
// recipes.ErrReleased: ErrNotHeld (which matches it) when that side holds
// nothing, sending nothing, or, after the holding was lost, an error that
// also wraps the loss's cause.
//
// # Permissions
//
// As package lock's Mutex, readers and writers alike (they queue in one
// path): CREATE and DELETE on the lock's path, READ on the path and on the
// node watched; WRITE on a holder's node to revoke it. See package lock
// and docs/security.md.
//
// Bad input, nil receivers and nil contexts follow the conventions of
// every zkrecipes package (see "Conventions" in package recipes). A
// method on a nil receiver that returns an error returns ErrNilReceiver.
package rwlock
