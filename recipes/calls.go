package recipes

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/corelink"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
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
	corelink.AuthRequired = func(s any) error {
		ss, _ := s.(*Session)
		return ss.authRequired()
	}
	corelink.CheckParent = func(ctx context.Context, s any, parent string) error {
		ss, err := linked(s)
		if err != nil {
			return err
		}
		return ss.checkParent(ctx, parent)
	}
	corelink.IsConnErr = isConnErr
	corelink.ServerErr = serverErr
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
	corelink.CreateProtected = func(ctx context.Context, s any, d any, parent, label string, data []byte) (corelink.Protected, error) {
		ss, err := linked(s)
		if err != nil {
			return corelink.Protected{}, err
		}
		dd, _ := d.(Dialect)
		return ss.createLabelled(ctx, dd, parent, label, data)
	}
	corelink.WatchExistsNow = func(ctx context.Context, s any, path string) (bool, *zk.Stat, any, error) {
		ss, err := linked(s)
		if err != nil {
			return false, nil, nil, err
		}
		ok, st, w, err := ss.watchExistsNow(ctx, path)
		if w == nil {
			return ok, st, nil, err // a typed nil would not compare equal to nil
		}
		return ok, st, w, err
	}
	corelink.OnFire = func(w any, f func(zk.Event)) {
		if ww, _ := w.(*Watch); ww != nil {
			ww.onFire(f)
		}
	}
	corelink.CleanupGUID = func(s any, d any, parent, guid string) {
		if ss, err := linked(s); err == nil {
			dd, _ := d.(Dialect)
			ss.cleanupGUID(dd.orDefault(), parent, guid)
		}
	}
}

// createLabelled creates parent/<label in d's protected form><seq10> as an
// ephemeral sequential node (see createProtected, whose costs it has).
// Nothing is sent for an invalid parent or label (ErrInvalidPath), or a
// create larger than MaxData (ErrDataTooLarge).
func (s *Session) createLabelled(ctx context.Context, d Dialect, parent, label string, data []byte) (corelink.Protected, error) {
	d = d.orDefault()
	guid := d.NewGUID()
	prefix := d.protect(guid, label)
	full := zkpath.Join(parent, prefix) + "0000000000"
	if err := ValidateParentPath(parent); err != nil {
		return corelink.Protected{}, err
	}
	if strings.Contains(label, "/") {
		return corelink.Protected{}, fmt.Errorf("%w %q: label %q is not one path segment", ErrInvalidPath, abridge(full), label)
	}
	if err := ValidateWritePath(full); err != nil {
		return corelink.Protected{}, err
	}
	if err := CheckRequest(s.opts.maxData, &zk.CreateRequest{Path: full, Data: data, Acl: s.ACLFor(zkpath.Join(parent, prefix)), Flags: zk.FlagEphemeralSequential}); err != nil {
		return corelink.Protected{}, fmt.Errorf("recipes: create %s: %w", abridge(full), err)
	}
	if err := ContextError(ctx); err != nil {
		return corelink.Protected{}, err
	}
	n, err := createPrefixed(ctx, s, d, 0, parent, guid, prefix, data)
	if err != nil {
		return corelink.Protected{}, err
	}
	p := corelink.Protected{Path: n.path, GUID: guid, SessionID: n.sid, Ambiguous: n.ambiguous}
	if n.statted {
		p.Czxid = n.czxid
	}
	return p, nil
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
	if err := CheckRequest(s.opts.maxData, &zk.CreateRequest{Path: p, Acl: s.ACLFor(p), Flags: zk.FlagContainer}); err != nil {
		return fmt.Errorf("recipes: create %s: %w", abridge(p), err)
	}
	return serverErr(ensureParents(s, p))
}

// OnStateChange registers f to be called synchronously, in order, for every
// state change of the Session; f must not block (it runs on the
// connection's goroutine: cancelling a context is fine). It returns the
// current state and session id, read atomically with the registration, and
// stop, which removes f. On a nil or closed Session f is not registered and
// the state returned is StateClosed.
func (s *Session) OnStateChange(f func(StateChange)) (state State, id int64, stop func()) {
	if s.check() != nil || f == nil {
		return StateClosed, 0, func() {}
	}
	return s.addHook(f)
}
