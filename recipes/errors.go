package recipes

import "errors"

// Sentinel errors of package recipes. Errors returned by this package wrap
// one of these (and, where ZooKeeper answered, go-zookeeper's own error) so
// that errors.Is works on both. A holding's context is cancelled with a cause
// that errors.Is one of ErrSuspended, ErrSessionLost, ErrNodeDeleted,
// ErrRevoked or ErrReleased.
var (
	// ErrInvalidPath: a path breaks ZooKeeper's rules; the message names the
	// path and the rule.
	ErrInvalidPath = errors.New("recipes: invalid path")
	// ErrDataTooLarge: node data exceeds the server's limit; nothing was sent.
	ErrDataTooLarge = errors.New("recipes: data too large")
	// ErrNilSession: a nil *Session was passed.
	ErrNilSession = errors.New("recipes: nil session")
	// ErrClosed: the Session is closed.
	ErrClosed = errors.New("recipes: session closed")
	// ErrSuspended: the connection was lost; the session may still live.
	// Holdings using the default loss policy step down with this cause.
	ErrSuspended = errors.New("recipes: connection suspended")
	// ErrSessionLost: the session expired, or go-zookeeper replaced it with a
	// new session, or it was closed. Ephemeral nodes of the old session are
	// gone (or about to be).
	ErrSessionLost = errors.New("recipes: session lost")
	// ErrNodeDeleted: the holding's node was deleted by someone else.
	ErrNodeDeleted = errors.New("recipes: node deleted")
	// ErrRevoked: another process asked the holder to release.
	ErrRevoked = errors.New("recipes: revoked")
	// ErrReleased: the holding was released by its owner.
	ErrReleased = errors.New("recipes: released")
	// ErrWouldBlock: a non-blocking acquisition found it would have to wait.
	ErrWouldBlock = errors.New("recipes: would block")
	// ErrFenced: a fenced write was rejected because the holding's node is
	// gone or changed.
	ErrFenced = errors.New("recipes: fenced write rejected")
	// ErrNodeNotFound: our own contender node vanished before we held.
	ErrNodeNotFound = errors.New("recipes: own node not found")
	// ErrBadArgument: an argument other than a path is invalid (n < 1, nil
	// predicate, unknown dialect role).
	ErrBadArgument = errors.New("recipes: bad argument")
)
