package recipes

import (
	"context"
	"fmt"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/corelink"
)

// This file hands the core's request mechanics to internal/zkcall (through
// internal/corelink), for the recipes that make their own ZooKeeper calls
// (barrier, queue, twophase, ...), so that retries, parent creation and
// guaranteed deletes live in one place without being exported.
func init() {
	corelink.WaitUsable = func(ctx context.Context, s any) (int64, error) {
		ss, err := linked(s)
		if err != nil {
			return 0, err
		}
		return ss.waitUsable(ctx)
	}
	corelink.RetryPause = func(ctx context.Context, s any) error {
		ss, err := linked(s)
		if err != nil {
			return err
		}
		return ss.retryPause(ctx)
	}
	corelink.IsConnErr = isConnErr
	corelink.CheckData = checkData
	corelink.EnsureParents = func(s any, p string) error {
		ss, err := linked(s)
		if err != nil {
			return err
		}
		return ss.ensureParentsChecked(p)
	}
	corelink.DeleteGuaranteed = func(s any, path string, sid int64) {
		if ss, err := linked(s); err == nil {
			ss.deleteInBackground(path, sid)
		}
	}
}

// linked returns s as a usable *Session, or ErrNilSession / ErrClosed.
func linked(s any) (*Session, error) {
	ss, _ := s.(*Session)
	if err := ss.check(); err != nil {
		return nil, err
	}
	return ss, nil
}

// ensureParentsChecked creates the missing levels of p, p included, as
// container nodes (deepest first on ErrNoNode). Cost: 1 createContainer per
// level tried; nothing is sent for "/" or for an invalid p (ErrInvalidPath:
// see ValidateParentPath, the /zookeeper tree included) or one whose create
// would exceed MaxData (ErrDataTooLarge).
func (s *Session) ensureParentsChecked(p string) error {
	if err := ValidateParentPath(p); err != nil {
		return err
	}
	if err := CheckRequest(s.opts.maxData, &zk.CreateRequest{Path: p, Acl: s.opts.acl, Flags: zk.FlagContainer}); err != nil {
		return fmt.Errorf("recipes: create %s: %w", abridge(p), err)
	}
	return ensureParents(s, p)
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
