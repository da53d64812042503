// Package corelink carries pieces of the recipes core's session
// mechanics to internal/zkcall, which the recipes built on the core (barrier,
// queue, twophase, lock, ...) use for their own ZooKeeper calls. Package
// recipes sets the variables once, in its init, before any importer of
// zkcall can run; they are read-only afterwards and safe for concurrent use.
// This package cannot name *recipes.Session (recipes imports it), so s is
// typed any; zkcall is the typed face, and the only reader.
package corelink

import (
	"context"

	"github.com/go-zookeeper/zk"
)

var (
	// WaitUsable waits until the session is connected and returns its id;
	// it fails with recipes.ErrNilSession, ErrClosed or ctx's error.
	WaitUsable func(ctx context.Context, s any) (int64, error)
	// RetryPause waits a little, or until the next state change; it fails
	// with ErrNilSession, ErrClosed or ctx's error.
	RetryPause func(ctx context.Context, s any) error
	// AuthRequired returns an error wrapping recipes.ErrNoAuth while the
	// server refuses the Session for missing authentication (error code
	// -124), nil otherwise.
	AuthRequired func(s any) error
	// CheckParent runs the Session's squatting check before a create
	// under parent: an error wrapping recipes.ErrOpenParent or ErrNoAuth,
	// ctx's error, or nil.
	CheckParent func(ctx context.Context, s any, parent string) error
	// IsConnErr reports a connection error: the outcome is unknown, or the
	// connection is unusable right now.
	IsConnErr func(err error) bool
	// ServerErr adds recipes.ErrNoAuth to an error that is the server's
	// zk.ErrNoAuth; any other error is returned unchanged.
	ServerErr func(err error) error
	// CheckData refuses data longer than limit (DefaultMaxData when
	// limit <= 0) with an error wrapping recipes.ErrDataTooLarge.
	CheckData func(data []byte, limit int) error
	// EnsureParents creates the missing levels of p as container nodes.
	EnsureParents func(s any, p string) error
	// DeleteGuaranteed deletes path in the background while session sid
	// (any when 0) lives and the Session is open.
	DeleteGuaranteed func(s any, path string, sid int64)
	// CreateTapped is one create of path; it returns the path created and
	// the czxid of the node, read from the reply (0 when unknown).
	CreateTapped func(s any, path string, data []byte, flags int32, acl []zk.ACL) (string, int64, error)
	// DeleteIfOurs deletes path while the node there was created in
	// transaction czxid (any when 0) and, with sid set, is ephemeral of
	// sid: 1 exists, then 1 delete with the version read. Nil once no node
	// of ours is left there; connection errors as they came.
	DeleteIfOurs func(s any, path string, czxid, sid int64) error
	// DeleteOwnedGuaranteed is DeleteIfOurs retried in the background
	// while the Session is open (and session sid lives, when set).
	DeleteOwnedGuaranteed func(s any, path string, czxid, sid int64)
	// CreateProtected creates parent/<label in dialect d's protected form
	// for a fresh GUID><seq10> as an ephemeral sequential node (d is a
	// recipes.Dialect) and returns it once its owner is known to be the
	// current session: its path, GUID, owner, czxid (0 when unknown) and
	// whether a create's outcome was unknown on the way.
	CreateProtected func(ctx context.Context, s any, d any, parent, label string, data []byte) (Protected, error)
	// CleanupGUID deletes, in the background, every child of parent whose
	// name carries guid in dialect d's protected form.
	CleanupGUID func(s any, d any, parent, guid string)
	// OnFire runs f with the event of w (a *recipes.Watch) once it fires:
	// at once if it has, else on the goroutine that fires it, so f must
	// not block. It is how a holding follows its node without a goroutine.
	OnFire func(w any, f func(ev zk.Event))
	// OnLoss registers f to run, synchronously and once, inside the
	// cancellation of holding h's Context (h is a *recipes.Holding), or at
	// once if it is done; stop removes it.
	OnLoss func(h any, f func(cause error)) (stop func())
	// Cause is holding h's Err without arming its node's watch (h is a
	// *recipes.Holding): how recipes built on holdings look at one
	// without paying Err's getData.
	Cause func(h any) error
	// WatchExistsNow subscribes to the Session's exists watch on path and
	// answers from a read made now (1 exists); w is a *recipes.Watch.
	WatchExistsNow func(ctx context.Context, s any, path string) (ok bool, st *zk.Stat, w any, err error)
)

// Protected is a node made by CreateProtected.
type Protected struct {
	Path      string
	GUID      string
	SessionID int64
	Czxid     int64
	Ambiguous bool
}
