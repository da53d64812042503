package recipes

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// Sentinel errors of package recipes. Errors returned by this package wrap
// one of these (and, where ZooKeeper answered, go-zookeeper's own error) so
// that errors.Is works on both. A holding's context is cancelled with a cause
// that errors.Is one of ErrSuspended (ErrLeaseExpired also matches it),
// ErrSessionLost, ErrNodeDeleted, ErrRevoked or ErrReleased.
var (
	// ErrInvalidPath: a path breaks ZooKeeper's rules; the message names the
	// path and the rule.
	ErrInvalidPath = errors.New("recipes: invalid path")
	// ErrDataTooLarge: a request would exceed the server's limit
	// (jute.maxbuffer, Session.MaxData): its whole encoding counts, path,
	// data, ACLs and, for a multi, every op. Nothing was sent. (The server
	// would close the connection on it, and a retry would fail the same
	// way.)
	ErrDataTooLarge = errors.New("recipes: request too large")
	// ErrNilSession: a nil *Session was passed.
	ErrNilSession = fmt.Errorf("recipes: nil session: %w", ErrBadArgument)
	// ErrClosed: the Session is closed.
	ErrClosed = errors.New("recipes: session closed")
	// ErrSuspended: the connection was lost; the session may still live.
	// Holdings using the default loss policy step down with this cause.
	ErrSuspended = errors.New("recipes: connection suspended")
	// ErrLeaseExpired: the session's lease ran out: nothing sent in the
	// last negotiated session timeout minus the lease margin has been
	// answered, so the server may expire the session within the margin
	// (see Session.LeaseDeadline). It errors.Is ErrSuspended: the session
	// may still live.
	ErrLeaseExpired error = leaseExpiredError{}
	// ErrSessionLost: the session expired, or go-zookeeper replaced it with a
	// new session, or it was closed. Ephemeral nodes of the old session are
	// gone (or about to be).
	ErrSessionLost = errors.New("recipes: session lost")
	// ErrNodeDeleted: the holding's node was deleted by someone else.
	ErrNodeDeleted = errors.New("recipes: node deleted")
	// ErrRevoked: another process asked the holder to release.
	ErrRevoked = errors.New("recipes: revoked")
	// ErrReleased: the holding was released by its owner. It is also what
	// Release (and the lockers' Unlock) answers when there was no live
	// holding left to release: released before, never held, or lost before (then
	// the error wraps the loss's cause too); see Held.Release.
	ErrReleased = errors.New("recipes: released")
	// ErrWouldBlock: a non-blocking acquisition found it would have to wait.
	ErrWouldBlock = errors.New("recipes: would block")
	// ErrFenced: a fenced write was rejected because the holding's node is
	// gone or changed.
	ErrFenced = errors.New("recipes: fenced write rejected")
	// ErrNodeNotFound: our own contender node vanished before we held.
	ErrNodeNotFound = errors.New("recipes: own node not found")
	// ErrBadArgument: an argument other than a path is invalid (n < 1, nil
	// predicate, unknown dialect role, a dialect without a recipe's names,
	// conflicting options, an empty or malformed server list).
	ErrBadArgument = errors.New("recipes: bad argument")
	// ErrNilContext: a nil context.Context was given (see "Conventions" in
	// the package doc: the call sends nothing). It wraps ErrBadArgument.
	ErrNilContext = fmt.Errorf("recipes: nil context: %w", ErrBadArgument)
	// ErrNoAuth: the server refused a request because the node's ACL does
	// not grant the permission to the Session's principals (see
	// WithDigestAuth, WithACL). It errors.Is zk.ErrNoAuth too. The answer
	// is final for the call that got it: neither the core nor the recipes'
	// one-shot calls send the request again (a lock's Lock fails at once).
	// Two long-running loops try again after a pause, as after any
	// refusal, and log it: persistent.Node's create, which keeps its node
	// present, and discovery's Provider, which keeps its view (package
	// cache instead ends its stream).
	//
	// A server that enforces authentication (zookeeper.enforce.auth.enabled)
	// refuses every request of a connection without accepted credentials
	// with error code -124 (SESSIONCLOSEDREQUIRESASLAUTH), which
	// go-zookeeper v1.0.4 reports as "unknown error: -124": the calls that
	// get it return an error wrapping ErrNoAuth as well. Connect itself
	// succeeds: the server accepts the session, then refuses the first
	// request of each connection and drops the connection. The Session
	// reads every reply's error code, and while the last one was -124 a
	// call failing for connection reasons fails at once with an error
	// wrapping ErrNoAuth instead of trying again (such a server applied
	// none of those requests): a call gets its refusal within about one
	// reconnection (under 3 s against a real server in
	// lab/integration/security/enforce) instead of tens of seconds.
	ErrNoAuth error = noAuthError{}
	// ErrAuthFailed: Connect's credentials (WithDigestAuth) were refused by
	// the server. It errors.Is zk.ErrAuthFailed; the error Connect returns
	// also wraps the server's actual answer.
	ErrAuthFailed error = authFailedError{}
	// ErrOpenParent: an authenticated Session (WithDigestAuth) was to
	// create a node under a parent whose ACL lets anyone create or delete
	// children (a path another client created world-open before us), where
	// anyone could delete the Session's node or queue ahead of it; nothing
	// was created. WithAllowOpenParents turns the refusal into a warning.
	ErrOpenParent = errors.New("recipes: parent open to anyone")
)

// noAuthError is ErrNoAuth: its own message, and a kind of zk.ErrNoAuth
// for errors.Is.
type noAuthError struct{}

func (noAuthError) Error() string { return "recipes: not authorized" }
func (noAuthError) Unwrap() error { return zk.ErrNoAuth }

// authFailedError is ErrAuthFailed, a kind of zk.ErrAuthFailed.
type authFailedError struct{}

func (authFailedError) Error() string { return "recipes: authentication failed" }
func (authFailedError) Unwrap() error { return zk.ErrAuthFailed }

// serverErr returns err with ErrNoAuth in its chain when it is the
// server's zk.ErrNoAuth (and ErrNoAuth is not there yet); any other err
// unchanged. Every error of a ZooKeeper answer the core returns goes
// through it. Pure.
func serverErr(err error) error {
	switch {
	case err == nil || errors.Is(err, ErrNoAuth):
		return err
	case isAuthRequired(err):
		return &noAuthWrap{err}
	case !errors.Is(err, zk.ErrNoAuth):
		return err
	case err == zk.ErrNoAuth:
		return ErrNoAuth
	}
	return &noAuthWrap{err}
}

// authRequiredText is how go-zookeeper v1.0.4 reports error code -124
// (SESSIONCLOSEDREQUIRESASLAUTH), which it does not know: a plain
// fmt.Errorf("unknown error: %v", code), with nothing to match but its
// text. A server enforcing authentication
// (zookeeper.enforce.auth.enabled) answers it to every request but auth
// from a connection that has not authenticated, then drops the
// connection.
const authRequiredText = "unknown error: -124"

// isAuthRequired reports whether err, or an error it wraps, is
// go-zookeeper's report of error code -124 (authRequiredText). Pure.
func isAuthRequired(err error) bool {
	if err == nil {
		return false
	}
	if err.Error() == authRequiredText {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return isAuthRequired(u.Unwrap())
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if isAuthRequired(e) {
				return true
			}
		}
	}
	return false
}

// noAuthWrap adds ErrNoAuth to an error that wraps zk.ErrNoAuth.
type noAuthWrap struct{ err error }

func (e *noAuthWrap) Error() string { return e.err.Error() }
func (e *noAuthWrap) Unwrap() []error {
	return []error{ErrNoAuth, e.err}
}

// leaseExpiredError is ErrLeaseExpired: its own message, and a kind of
// ErrSuspended for errors.Is.
type leaseExpiredError struct{}

func (leaseExpiredError) Error() string { return "recipes: lease expired" }
func (leaseExpiredError) Unwrap() error { return ErrSuspended }
