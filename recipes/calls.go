package recipes

import (
	"context"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// This file exports the core's request mechanics for recipes that make their
// own ZooKeeper calls through Session.Conn (barrier, queue), so that retries,
// parent creation and guaranteed deletes still live in one place.

// WaitUsable waits until the session is connected (or reconnected) and
// returns the current session id. It fails with ErrNilSession, ErrClosed or
// ctx's error. No ZooKeeper calls.
func (s *Session) WaitUsable(ctx context.Context) (int64, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	return s.waitUsable(ctx)
}

// RetryPause waits a little, or until the next state change, before a
// request that failed for connection reasons is tried again; it returns
// ctx's error when ctx is done first.
func (s *Session) RetryPause(ctx context.Context) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.retryPause(ctx)
}

// IsConnErr reports whether err means that a request's outcome is unknown or
// that the connection is unusable right now (as opposed to an answer from
// the server). Pure.
func IsConnErr(err error) bool { return isConnErr(err) }

// EnsureParents creates the missing levels of p, p included, as container
// nodes (deepest first on ErrNoNode). Cost: 1 createContainer per level
// tried; nothing is sent for "/" or for an invalid p (ErrInvalidPath: see
// ValidateParentPath, the /zookeeper tree included) or one whose create
// would exceed MaxData (ErrDataTooLarge). Meant to be called after a create
// failed with ErrNoNode.
func (s *Session) EnsureParents(p string) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := ValidateParentPath(p); err != nil {
		return err
	}
	if err := CheckRequest(s.opts.maxData, &zk.CreateRequest{Path: p, Acl: s.opts.acl, Flags: zk.FlagContainer}); err != nil {
		return fmt.Errorf("recipes: create %s: %w", abridge(p), err)
	}
	return ensureParents(s, p)
}

// DeleteGuaranteed deletes path in the background, retrying deletes whose
// outcome is unknown while the session sid lives (any session when sid is 0)
// and the Session is open: the guaranteed delete. With sid set, path is
// deleted only while it is an ephemeral node of sid, with the version read
// (cost per attempt: 1 exists + 1 delete), so a node another client has
// since created at the same path is left alone; with sid 0 it is deleted
// by path (1 delete per attempt).
func (s *Session) DeleteGuaranteed(path string, sid int64) {
	if s.check() != nil {
		return
	}
	s.deleteInBackground(path, sid)
}

// OnStateChange registers f to be called synchronously, in order, for every
// state change of the Session; f must not block (it runs on the
// connection's goroutine: cancelling a context is fine). It returns the
// current state and session id, read atomically with the registration, and
// a function removing f. On a nil or closed Session f is not registered and
// the state returned is StateClosed.
func (s *Session) OnStateChange(f func(StateChange)) (State, int64, func()) {
	if s.check() != nil || f == nil {
		return StateClosed, 0, func() {}
	}
	return s.addHook(f)
}
