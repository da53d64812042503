package recipes

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"
)

// The call layer: how a recipe sends its own ZooKeeper requests under the
// Session's rules. Every recipe of this module is built on it, and so can
// one written outside it: send only on a usable session; after a
// connection error pause and send again, until the call gets an answer
// from the server or ctx ends; create a node's missing parents after the
// squatting check (CreateUnder); delete a node only while it is ours
// (DeleteOwned).

// Do runs call on the Session's connection once the Session is usable,
// and again, after a pause, each time it fails with a connection error
// (IsConnErr), until it returns any other result, which Do returns
// unchanged (nil, or the server's answer such as zk.ErrNoNode), except
// that a refusal (zk.ErrNoAuth) comes back as an error that also wraps
// ErrNoAuth (see Answer); Do does not send a refused call again. A
// connection error while the server refuses the Session for missing
// authentication (AuthRequired) is such a refusal: Do returns it at once.
// sid is the id of the session the call is sent on.
//
// Cost: whatever call sends, once per attempt; nothing else. Errors: call's
// own, or, without an answer (Stopped reports these): an error wrapping
// ContextError(ctx) as soon as ctx is done (so a done ctx sends nothing),
// ErrNilSession or ErrClosed; those are checked before every attempt and
// while waiting. A nil ctx is ErrNilContext, not Stopped: nothing is sent.
//
// Writes of unknown outcome: a connection error after a write means it may
// or may not have been applied, and Do sends it again. That is right only
// for a call whose repeat the caller's handling of the answer makes safe: a
// read; a create of a fixed path where zk.ErrNodeExists counts as done (or
// makes the caller look at what is there); a delete where zk.ErrNoNode
// counts as done. A write whose repeat would change what it means (a
// sequential create, an ephemeral create that must be ours, a delete that
// must remove only our node) must not be repeated blindly: its call
// reports the connection error in its result with a nil error, and the
// caller resolves the outcome itself (it still gets Do's waiting and ctx
// handling).
func Do[T any](ctx context.Context, s *Session, call func(conn *zk.Conn, sid int64) (T, error)) (T, error) {
	var zero T
	if ctx == nil {
		return zero, ErrNilContext // bad input, not Stopped: nothing is left to finish
	}
	for {
		if err := ContextError(ctx); err != nil {
			return zero, stop{err}
		}
		sid, err := s.WaitUsable(ctx)
		if err != nil {
			return zero, stop{err}
		}
		v, err := call(s.conn, sid)
		if !isConnErr(err) {
			return v, serverErr(err)
		}
		if err := s.retryPause(ctx); err != nil {
			if errors.Is(err, ErrNoAuth) {
				return zero, err // the server's refusal: an answer
			}
			return zero, stop{err}
		}
	}
}

// Exec is Do for a call with no result other than its error.
func Exec(ctx context.Context, s *Session, call func(conn *zk.Conn, sid int64) error) error {
	_, err := Do(ctx, s, func(conn *zk.Conn, sid int64) (struct{}, error) {
		return struct{}{}, call(conn, sid)
	})
	return err
}

// stop marks an error with which the call layer gave up without an answer.
type stop struct{ err error }

func (e stop) Error() string { return e.err.Error() }
func (e stop) Unwrap() error { return e.err }

// Stopped reports whether err (or an error it wraps) is one with which Do,
// Exec, CreateUnder or DeleteOwned gave up without an answer from the
// server: ctx ended, or the Session is nil or closed. Pure.
func Stopped(err error) bool {
	var e stop
	return errors.As(err, &e)
}

// IsConnErr reports whether err means that a request's outcome is unknown
// or that the connection is unusable right now (as opposed to an answer
// from the server). Pure.
func IsConnErr(err error) bool { return isConnErr(err) }

// Answer returns err with ErrNoAuth in its chain when it wraps the
// server's zk.ErrNoAuth (errors.Is still reaches zk.ErrNoAuth); any other
// err unchanged. For the results of calls made outside Do, which applies
// it itself. Pure.
func Answer(err error) error { return serverErr(err) }

// CheckData returns an error wrapping ErrDataTooLarge when data is longer
// than limit bytes (DefaultMaxData when limit <= 0). It is a first check
// only: the server's limit applies to the whole request, so a write must
// also pass CheckRequest or CheckMulti. Pure.
func CheckData(data []byte, limit int) error { return checkData(data, limit) }

// WaitUsable waits until the Session is connected (or reconnected) and
// returns its id. It returns at once on a connected Session, even when ctx
// is done (a cleanup that must still be sent once its caller has given up
// waits with it; check ContextError first for "a done ctx sends
// nothing"), and fails with ctx's error (ContextError) only if it has to
// wait. Errors: also ErrNilSession, ErrClosed. No ZooKeeper calls.
func (s *Session) WaitUsable(ctx context.Context) (int64, error) {
	if err := s.checkCtx(ctx); err != nil {
		return 0, err
	}
	return s.waitUsable(ctx)
}

// Pause waits a little, or until the next state change, before a request
// that failed for connection reasons is tried again. Errors: ctx's
// (ContextError) when ctx is done first; AuthRequired's at once while that
// is not nil; ErrNilSession, ErrClosed. No ZooKeeper calls.
func (s *Session) Pause(ctx context.Context) error {
	if err := s.checkCtx(ctx); err != nil {
		return err
	}
	return s.retryPause(ctx)
}

// AuthRequired returns an error wrapping ErrNoAuth while the server
// refuses the Session for missing authentication: the last reply the
// Session read was error code -124 (a server with
// zookeeper.enforce.auth.enabled, a Session without accepted
// credentials). Such a server applies nothing it got on a connection it
// refused, so a write that failed with a connection error then was not
// applied: a caller that would report its outcome as unknown reports this
// error instead. Nil otherwise; ErrNilSession for a nil Session. No
// ZooKeeper calls.
func (s *Session) AuthRequired() error {
	if s == nil {
		return ErrNilSession
	}
	return s.authRequired()
}
