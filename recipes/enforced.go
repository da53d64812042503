package recipes

import (
	"context"
	"fmt"
	"sync/atomic"
)

// A server that enforces authentication (zookeeper.enforce.auth.enabled)
// answers the first request other than auth of a connection without
// accepted credentials with error code -124 (SESSIONCLOSEDREQUIRESASLAUTH),
// then closes the session's connection and stops reading it: that request
// and every one queued behind it on the connection is not applied
// (ZooKeeper 3.8, AuthenticationHelper.enforceAuthentication). go-zookeeper
// fails the queued ones with zk.ErrConnectionClosed, the Session's calls
// would take that for a connection loss and send again on the next
// connection, to be refused again: a call could go round for tens of
// seconds before its own request was the one answered -124.
//
// The Session's tap reads every reply's error code (above TLS, in
// plaintext) and tells the authGate: a reply with -124 marks the server
// as requiring credentials the Session lacks, any other reply to a request
// (a ping's included) clears the mark. While the mark is set, a call that
// failed for connection reasons and would pause to try again fails at once
// with an error wrapping ErrNoAuth instead (retryPause, recipes.Do), and a
// recipe that reports a write's outcome as unknown after a connection loss
// reports the refusal instead (Session.AuthRequired): nothing such a server
// got from an unauthenticated connection was applied.
//
// Invariant: the mark changes only on a reply the tap read, before
// go-zookeeper sees that reply or the connection's end; so a call failed by
// the connection that carried a -124 sees the mark when it looks.

// codeAuthRequired is ZooKeeper's SESSIONCLOSEDREQUIRESASLAUTH.
const codeAuthRequired = -124

// authGate remembers whether the last reply the tap read was a refusal
// for missing authentication. The zero value is unmarked.
type authGate struct{ refused atomic.Bool }

// authReply is the tap's report of one reply to a request: code is its
// error code. Safe for concurrent use; never blocks.
func (s *Session) authReply(code int32) {
	s.auth.refused.Store(code == codeAuthRequired)
}

// authRequired returns an error wrapping ErrNoAuth when the server's last
// reply refused a request for missing authentication (error code -124),
// nil otherwise. No ZooKeeper calls.
func (s *Session) authRequired() error {
	if s == nil || !s.auth.refused.Load() {
		return nil
	}
	return fmt.Errorf("%w: the server requires authentication the Session has not given (error code %d); nothing it refused was applied", ErrNoAuth, codeAuthRequired)
}

// retryOrRefused is retryPause for a request that failed for connection
// reasons, except that it fails at once with authRequired's error while
// the server refuses the Session for missing authentication (before the
// pause, or when the pause ends).
func (s *Session) retryOrRefused(ctx context.Context) error {
	if err := s.authRequired(); err != nil {
		return err
	}
	if !pause(ctx, s.changes()) {
		return ContextError(ctx)
	}
	return s.authRequired()
}
