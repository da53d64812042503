package recipes

import (
	"context"
	"errors"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
)

// retryPause spaces background retries while the connection looks usable
// but requests still fail.
const retryPause = 100 * time.Millisecond

// deleteNow deletes path once; if the outcome is ambiguous the delete is
// continued in the background. Cost: 1 delete.
func (s *Session) deleteNow(path string) {
	err := s.conn.Delete(path, -1)
	if err == nil || errors.Is(err, zk.ErrNoNode) {
		return
	}
	if isConnErr(err) {
		s.deleteInBackground(path, 0)
		return
	}
	s.log.Warn("recipes: delete failed", "path", path, "err", err)
}

// deleteWithin sends one delete of path with version from the session's
// background and waits for its answer until ctx is done, so that a caller
// is never held past its ctx by a connection that stopped answering (a
// synchronous request waits up to go-zookeeper's receive timeout, two
// thirds of the session timeout). If the delete fails with a connection
// error, whether ctx is still waiting or not, it continues as
// deleteInBackground(path, sid): the guaranteed delete, bounded by the
// session. It returns the server's answer (nil, zk.ErrNoNode, ...), or
// errDeleteAway when the answer did not come while ctx lasted or the
// outcome was unknown (the delete then goes on in the background). On a
// closing Session nothing is sent and it returns ErrClosed. Cost: 1 delete.
func (s *Session) deleteWithin(ctx context.Context, path string, version int32, sid int64) error {
	answer := make(chan error) // a send succeeds only while the caller waits
	if !s.background(func(context.Context) {
		err := s.conn.Delete(path, version)
		if isConnErr(err) {
			s.log.Info("recipes: delete continues in background", "path", path, "err", err)
			s.deleteInBackground(path, sid)
			err = errDeleteAway
		}
		select {
		case answer <- err:
		case <-ctx.Done(): // the caller has gone: nobody else hears of a refusal
			if err != nil && !errors.Is(err, errDeleteAway) && !errors.Is(err, zk.ErrNoNode) {
				s.log.Warn("recipes: delete failed", "path", path, "err", err)
			}
		}
	}) {
		return ErrClosed
	}
	select {
	case err := <-answer:
		return err
	case <-ctx.Done():
		return errDeleteAway
	}
}

// errDeleteAway: deleteWithin's delete goes on in the background.
var errDeleteAway = errors.New("recipes: delete continues in the background")

// deleteInBackground is the guaranteed delete: it retries deleting path
// while the session lives and the Session is open, stopping when the
// session id changes (a node of a lost session is gone with it).
//
// With sid set, path is deleted only while it is an ephemeral node of
// session sid: each attempt reads it (1 exists) and deletes it with the
// version read (1 delete), so a node that another client created at the
// same path since (ours was deleted unseen, or our session went) is left
// alone: the rule for paths that are not unique to us. With sid 0 (a node
// carrying our GUID, of whatever session), it deletes by path (1 delete
// per attempt).
func (s *Session) deleteInBackground(path string, sid int64) {
	if sid != 0 {
		s.deleteOwnedInBackground(path, owner{sid: sid})
		return
	}
	s.retryDelete(path, 0, func() error {
		if err := s.conn.Delete(path, -1); !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		return nil
	})
}

// deleteOwnedInBackground is the guaranteed delete of a node that must
// still be ours (see owner and deleteIfOurs, whose window it shares): it
// retries while the Session is open and, with own.sid set, while that
// session lives; with only own.czxid set, under any session (a persistent
// node outlives ours). Cost per attempt: 1 exists + 1 delete.
func (s *Session) deleteOwnedInBackground(path string, own owner) {
	s.retryDelete(path, own.sid, func() error { return s.deleteIfOurs(path, own) })
}

// retryDelete runs del in the background, once the session is usable,
// until it returns nil or an error other than a connection error, while
// the Session is open and, with sid set, while session sid lives; after a
// connection error it waits for the session's next state change.
func (s *Session) retryDelete(path string, sid int64, del func() error) {
	s.background(func(ctx context.Context) {
		for {
			id, err := s.waitUsable(ctx)
			if err != nil {
				return
			}
			if sid != 0 && id != sid {
				return
			}
			err = del()
			switch {
			case err == nil:
				s.log.Debug("recipes: background delete done", "path", path)
				return
			case !isConnErr(err):
				s.log.Warn("recipes: background delete failed", "path", path, "err", err)
				return
			}
			if !pause(ctx, s.changes()) {
				return
			}
		}
	})
}

// cleanupGUID deletes, in the background, every child of parent carrying
// guid: the result of a create whose outcome we could not learn. Cost: 1
// getChildren + 1 delete per node found, per attempt.
func (s *Session) cleanupGUID(d Dialect, parent, guid string) {
	s.background(func(ctx context.Context) {
		for {
			if _, err := s.waitUsable(ctx); err != nil {
				return
			}
			children, _, err := s.conn.Children(parent)
			switch {
			case errors.Is(err, zk.ErrNoNode):
				return
			case err == nil:
				for _, c := range children {
					if d.HasGUID(c, guid) {
						s.deleteNow(zkpath.Join(parent, c))
					}
				}
				return
			case !isConnErr(err):
				s.log.Warn("recipes: cleanup failed", "parent", parent, "err", err)
				return
			}
			if !pause(ctx, s.changes()) {
				return
			}
		}
	})
}

// pause waits for a state change or retryPause, whichever comes first; it
// returns false when ctx is done.
func pause(ctx context.Context, changed <-chan struct{}) bool {
	t := time.NewTimer(retryPause)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-changed:
	case <-t.C:
	}
	return true
}
