// Package zkcall is the one way the recipes built on the core (barrier,
// queue, twophase, lock, leader, rwlock) run a ZooKeeper call under the
// session's rules: send only on a usable session, and after a connection
// error pause and send again, until the call gets an answer from the server
// or ctx ends. It also carries the core's other request mechanics (parent
// creation, guaranteed deletes) without exporting them from package recipes;
// it reaches recipes' internals through internal/corelink.
package zkcall

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/corelink"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Do runs call on the session's connection once the session is usable,
// and again, after a pause, each time it fails with a connection error
// (IsConnErr), until it returns any other result, which Do returns
// unchanged (nil, or the server's answer such as zk.ErrNoNode), except
// that a refusal (zk.ErrNoAuth) comes back as an error that also wraps
// recipes.ErrNoAuth (see Answer); Do does not send a refused call again.
// A connection error while the server refuses the Session for missing
// authentication (AuthRequired) is such a refusal: Do returns it at once,
// not Stopped.
// sid is the id of the session the call is sent on. Do fails without sending anything
// when ctx is done (an error wrapping recipes.ContextError(ctx), so
// errors.Is context.Canceled or context.DeadlineExceeded) and with
// recipes.ErrNilSession or recipes.ErrClosed; those errors are checked
// before every attempt and while waiting. Stopped tells them from the
// call's own results.
//
// Writes of unknown outcome: a connection error after a write means it may
// or may not have been applied, and Do sends it again. That is right only
// for a call whose repeat the caller's handling of the answer makes safe: a
// read; a create of a fixed path where ErrNodeExists counts as done (or
// makes the caller look at what is there); a delete where ErrNoNode counts
// as done. A write whose repeat would change what it means (a sequential
// create, an ephemeral create that must be ours, a delete that must remove
// only our node) must not be repeated blindly: its call reports the
// connection error in its result with a nil error, and the caller resolves
// the outcome itself (it still gets Do's waiting and ctx handling).
func Do[T any](ctx context.Context, s *recipes.Session, call func(conn *zk.Conn, sid int64) (T, error)) (T, error) {
	var zero T
	for {
		sid, err := Usable(ctx, s)
		if err != nil {
			return zero, stop{err}
		}
		v, err := call(s.Conn(), sid)
		if !IsConnErr(err) {
			return v, Answer(err)
		}
		if err := Pause(ctx, s); err != nil {
			if errors.Is(err, recipes.ErrNoAuth) {
				return zero, err // the server's refusal: an answer
			}
			return zero, stop{err}
		}
	}
}

// stop marks an error with which Do gave up without an answer.
type stop struct{ err error }

func (e stop) Error() string { return e.err.Error() }
func (e stop) Unwrap() error { return e.err }

// Stopped reports whether err (or an error it wraps) is one with which Do
// or Exec gave up without an answer from the server: ctx ended, or the
// Session is nil or closed. Pure.
func Stopped(err error) bool {
	var e stop
	return errors.As(err, &e)
}

// Exec is Do for a call with no result other than its error.
func Exec(ctx context.Context, s *recipes.Session, call func(conn *zk.Conn, sid int64) error) error {
	_, err := Do(ctx, s, func(conn *zk.Conn, sid int64) (struct{}, error) {
		return struct{}{}, call(conn, sid)
	})
	return err
}

// Usable waits until the session is connected (or reconnected) and returns
// its id. It fails with ctx's error as soon as ctx is done, even on a
// connected session (so a done ctx sends nothing), and with
// recipes.ErrNilSession or recipes.ErrClosed. No ZooKeeper calls.
func Usable(ctx context.Context, s *recipes.Session) (int64, error) {
	if err := recipes.ContextError(ctx); err != nil {
		return 0, err
	}
	return corelink.WaitUsable(ctx, s)
}

// WaitUsable is Usable without the first check of ctx: it returns at
// once on a connected session even when ctx is done, and fails with ctx's
// error only if it has to wait. For a cleanup that must still be sent once
// its caller has given up.
func WaitUsable(ctx context.Context, s *recipes.Session) (int64, error) {
	return corelink.WaitUsable(ctx, s)
}

// Pause waits a little, or until the next state change, before a request
// that failed for connection reasons is tried again; it returns ctx's error
// (recipes.ContextError) when ctx is done first, and AuthRequired's error
// at once while that is not nil.
func Pause(ctx context.Context, s *recipes.Session) error {
	return corelink.RetryPause(ctx, s)
}

// Answer returns err with recipes.ErrNoAuth in its chain when it wraps the
// server's zk.ErrNoAuth (errors.Is still reaches zk.ErrNoAuth); any other
// err unchanged. For the results of calls made outside Do. Pure.
func Answer(err error) error { return corelink.ServerErr(err) }

// AuthRequired returns an error wrapping recipes.ErrNoAuth while the
// server refuses the Session for missing authentication: the last reply
// the Session read was error code -124 (a server with
// zookeeper.enforce.auth.enabled, a Session without accepted
// credentials). Such a server applies nothing it got on a connection it
// refused, so a write that failed with a connection error then was not
// applied: a caller that would report its outcome as unknown reports this
// error instead. Nil otherwise, and for a nil Session. No ZooKeeper calls.
func AuthRequired(s *recipes.Session) error { return corelink.AuthRequired(s) }

// CheckParent is the Session's squatting check before a create under
// parent (see recipes.WithAllowOpenParents): for an authenticated
// Session, the first time for each parent, 1 getACL; a parent that lets
// anyone create or delete children is refused with an error wrapping
// recipes.ErrOpenParent, or logged as a warning under
// WithAllowOpenParents. Nil at once for a Session without credentials or
// a parent checked already; also fails with ctx's error, or ErrNilSession
// / ErrClosed.
func CheckParent(ctx context.Context, s *recipes.Session, parent string) error {
	return corelink.CheckParent(ctx, s, parent)
}

// IsConnErr reports whether err means that a request's outcome is unknown
// or that the connection is unusable right now (as opposed to an answer
// from the server). Pure.
func IsConnErr(err error) bool { return corelink.IsConnErr(err) }

// EnsureParents creates the missing levels of p, p included, as container
// nodes (deepest first on ErrNoNode). Cost: 1 createContainer per level
// tried; nothing is sent for "/" or for an invalid p (recipes.ErrInvalidPath:
// see recipes.ValidateParentPath, the /zookeeper tree included) or one whose
// create would exceed MaxData (recipes.ErrDataTooLarge). Meant to be called
// after a create failed with ErrNoNode; it is not retried (a connection
// error is returned, and the caller's loop tries its create again).
func EnsureParents(s *recipes.Session, p string) error {
	return corelink.EnsureParents(s, p)
}

// WatchExistsNow reports whether path exists, read now (1 exists, even
// when the Session's exists watch on path is already armed), and
// subscribes to that watch (see recipes.Session.WatchExists): for an owner
// check that must not trust an answer from before a reconnection. A single
// attempt: connection errors are returned as they come.
func WatchExistsNow(ctx context.Context, s *recipes.Session, path string) (bool, *zk.Stat, *recipes.Watch, error) {
	ok, st, w, err := corelink.WatchExistsNow(ctx, s, path)
	ww, _ := w.(*recipes.Watch)
	return ok, st, ww, err
}

// OnFire runs f with w's event once the Session's watch fires: at once if
// it has, else on the goroutine that fires it (go-zookeeper's receiving
// goroutine, usually), so f must not block. A holding follows its node
// with it instead of a goroutine of its own.
func OnFire(w *recipes.Watch, f func(ev zk.Event)) {
	corelink.OnFire(w, f)
}

// DeleteGuaranteed deletes path in the background, retrying deletes whose
// outcome is unknown while the session sid lives (any session when sid is
// 0) and the Session is open: the guaranteed delete. With sid set, path is
// deleted only while it is an ephemeral node of sid, with the version read
// (cost per attempt: 1 exists + 1 delete), so a node another client has
// since created at the same path is left alone; with sid 0 it is deleted by
// path (1 delete per attempt). Nothing happens on a nil or closed Session.
func DeleteGuaranteed(s *recipes.Session, path string, sid int64) {
	corelink.DeleteGuaranteed(s, path, sid)
}

// CreateTapped creates path once (1 create) and returns the path created
// and the czxid of the new node, which the Session's create tap reads from
// the reply at no cost; czxid is 0 when the tap missed it (then read the
// node's stat, knowing that another process may have replaced it since).
// Errors are the create's own, or recipes.ErrNilSession / ErrClosed
// (nothing sent). For a node at a path that another process can reuse,
// whose later delete must go through DeleteOwned.
func CreateTapped(s *recipes.Session, path string, data []byte, flags int32, acl []zk.ACL) (string, int64, error) {
	return corelink.CreateTapped(s, path, data, flags, acl)
}

// DeleteOwned deletes path only while the node there is still ours: the
// one created in transaction czxid (its Stat.Czxid; any when 0) and, with
// sid set, ephemeral of session sid. It is the delete for every node at a
// path that another process can reuse: a delete by path would remove a
// node another process created there after ours went away. Each attempt
// reads the stat (1 exists) and deletes with the version read (1 delete),
// reading again when the version changed meanwhile; connection errors are
// retried as in Do (a repeat is safe: it checks again). It returns nil
// once no node of ours is left at path (deleted, gone, or the node there
// is not ours, left alone), the server's answer, or, when ctx ends or the
// Session closes first, an error that Stopped reports: the delete then
// goes on in the background (DeleteOwnedGuaranteed), except on a closed
// Session. ZooKeeper has no delete conditional on a czxid: the window
// that remains is the one round trip between the exists and the delete,
// in which another process would have to delete our node and create its
// own with the very data version read (see recipes' deleteIfOurs).
func DeleteOwned(ctx context.Context, s *recipes.Session, path string, czxid, sid int64) error {
	err := Exec(ctx, s, func(_ *zk.Conn, _ int64) error { return corelink.DeleteIfOurs(s, path, czxid, sid) })
	if Stopped(err) {
		DeleteOwnedGuaranteed(s, path, czxid, sid)
	}
	return err
}

// DeleteOwnedGuaranteed is DeleteOwned in the background: retried while
// the Session is open and, with sid set, while session sid lives (with
// only czxid set, under any session: a persistent node outlives ours).
// Cost per attempt: 1 exists + 1 delete. Nothing happens on a nil or
// closed Session.
func DeleteOwnedGuaranteed(s *recipes.Session, path string, czxid, sid int64) {
	corelink.DeleteOwnedGuaranteed(s, path, czxid, sid)
}

// CheckData returns an error wrapping recipes.ErrDataTooLarge when data is
// longer than limit bytes (recipes.DefaultMaxData when limit <= 0). It is a
// first check only: the server's limit applies to the whole request, so a
// write must also pass recipes.CheckRequest or CheckMulti. Pure.
func CheckData(data []byte, limit int) error { return corelink.CheckData(data, limit) }

// Protected is a node made by CreateProtected.
type Protected struct {
	Path      string // full path, sequence included
	GUID      string // the GUID its name carries
	SessionID int64  // its ephemeral owner: the session current at its creation
	Czxid     int64  // its czxid, 0 when the create's reply did not say
	// Ambiguous: a create's outcome was unknown on the way, so a late copy
	// carrying GUID may still appear under the parent; CleanupGUID removes
	// such copies.
	Ambiguous bool
}

// CreateProtected creates parent/<label in d's protected form for a fresh
// GUID><seq10> ("_c_<uuid36>-<label><seq10>" for Curator, "<uuid
// hex32><label><seq10>" for kazoo) as an ephemeral sequential node, the
// core's protected create: a create whose outcome is unknown is resolved by
// listing the parent for our GUID, a node found under an older session is
// deleted and the create tried again, missing parents are created as
// containers. It returns once the node's owner is known to be the current
// session. Cost: 1 create (+1 createContainer per missing parent level; an
// ambiguous create: 1 sync + 1 getChildren + 1 exists; an authenticated
// Session's first create under parent: +1 getACL, see CheckParent, whose
// ErrOpenParent it returns). Nothing is sent for an invalid parent or a
// label that is not part of one path segment (recipes.ErrInvalidPath), a
// create larger than the session's MaxData (recipes.ErrDataTooLarge) or a
// done ctx (ctx's error); a node we could no longer look for when ctx
// ended is deleted in the background.
func CreateProtected(ctx context.Context, s *recipes.Session, d recipes.Dialect, parent, label string, data []byte) (Protected, error) {
	p, err := corelink.CreateProtected(ctx, s, d, parent, label, data)
	return Protected(p), err
}

// CleanupGUID deletes, in the background while the session lives, every
// child of parent whose name carries guid in d's protected form (the late
// copies of an ambiguous CreateProtected). Cost: 1 getChildren + 1 delete
// per node found. Nothing happens on a nil or closed Session.
func CleanupGUID(s *recipes.Session, d recipes.Dialect, parent, guid string) {
	corelink.CleanupGUID(s, d, parent, guid)
}

// OnLoss registers f to be called with the cause when h's Context is
// cancelled: synchronously, inside that cancellation and before it
// returns, so that whatever f cancels ends in the same step as h (a
// context.AfterFunc callback would run later, on a goroutine of its own).
// If h has already ended, f runs at once, before OnLoss returns. f runs
// at most once and must not block (cancelling a context is the intended
// use). stop removes f. Nothing happens for a nil h or f. No ZooKeeper
// calls, and Context's watch is not armed.
func OnLoss(h *recipes.Holding, f func(cause error)) (stop func()) {
	return corelink.OnLoss(h, f)
}

// Cause is h.Err() without arming the watch on h's node that Err arms on
// its first call: for recipes that check a holding of their own during an
// acquisition, where that getData would be a request their Cost lines do
// not count. No ZooKeeper calls.
func Cause(h *recipes.Holding) error { return corelink.Cause(h) }
