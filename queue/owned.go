package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// The delete rule. A claim node's path "<claims>/<item>" is the same for
// every claimant, so a delete "by path" (version -1) may remove another
// consumer's claim: ours may already be gone (a delete of ours applied
// while its reply was lost, our session expired) and someone else's created
// in its place. So a node whose path is not unique to us is deleted only
// after reading it (at claim time, or again after any ambiguity) and seeing
// our session as its ephemeral owner, and then with the version read: once
// here (deleteOwned, with the version read at claim time), and after any
// ambiguity by the guaranteed delete (recipes.Session.DeleteGuaranteed) with our session, which
// reads the node before every attempt and leaves it alone once it is not
// ours.

// usable returns ctx's error when ctx is done (so that a done ctx sends
// nothing; a nil ctx is recipes.ErrNilContext), else waits until the session is usable and returns its id.
// No ZooKeeper calls.
func (q *Queue) usable(ctx context.Context) (int64, error) {
	if ctx == nil {
		return 0, recipes.ErrNilContext
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("queue %s: %w", q.path, recipes.ContextError(ctx))
	}
	sid, err := q.s.WaitUsable(ctx)
	if err != nil {
		return 0, fmt.Errorf("queue %s: %w", q.path, err)
	}
	return sid, nil
}

// deleteOwned deletes the node at path, read before as an ephemeral of
// session sid with version, once; if the outcome is unknown it goes on in
// the background (recipes.Session.DeleteGuaranteed with sid: owner-checked). Cost:
// 1 delete.
func (q *Queue) deleteOwned(path string, sid int64, version int32) {
	if q.s.ID() != sid {
		return // gone with its session
	}
	err := q.s.Conn().Delete(path, version)
	switch {
	case err == nil, errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrBadVersion):
		// Deleted, or not the node we read: not ours to delete.
	case recipes.IsConnErr(err):
		q.s.DeleteGuaranteed(path, sid)
	default:
		q.s.Logger().Warn("queue: delete claim failed", "path", path, "err", err)
	}
}
