// Ending a claim: Ack removes the item and its claim node in one
// multi, Release deletes the claim node and returns the item; both learn
// the outcome of a request whose answer was lost, and both know when the
// claim's session is gone.

package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// Ack removes the item and its claim in one multi: a version check of our
// claim node, its delete and the item's delete, all or nothing. Cost: 1
// multi; after an ambiguous multi, 1 exists of the claim node (and 1 of the
// item) to learn its outcome. Wakes consumers waiting on the queue path and
// on the claims path. The outcome is exact:
//
//   - nil: we deleted the item, under our own claim (also for an Ack after
//     a successful Ack).
//   - ErrClaimLost: the item was not removed by us and is, or will be,
//     delivered again: our session died, our claim node was deleted, or
//     the claim was released.
//   - ErrUncertain: a multi of ours may have been applied and we cannot
//     learn whether (ctx done or session lost before we could read it
//     back, and the item is gone). Ack may be called again to learn more.
//   - ctx's error, or recipes.ErrClosed: nothing was sent; the claim is
//     unchanged.
//   - other errors (the item changed or was deleted by someone while we
//     held its claim, server errors): the item was not removed by us.
//
// A done ctx sends nothing.
func (c *Claim) Ack(ctx context.Context) error {
	if ctx == nil {
		return recipes.ErrNilContext
	}
	if c == nil || c.q == nil {
		return ErrNilReceiver
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.state {
	case claimAcked:
		return nil
	case claimReleased:
		return fmt.Errorf("%w: %s already released or lost", ErrClaimLost, c.item.Name)
	}
	err := c.ack(ctx)
	if errors.Is(err, ErrUncertain) && c.gone.Load() {
		c.cancel(err)
	}
	return err
}

func (c *Claim) ack(ctx context.Context) error {
	q := c.q
	for { // not recipes.Exec: a multi of unknown outcome is learned (learn) before it is sent again
		sid, err := q.usable(ctx)
		if err != nil {
			if c.ambiguous {
				return fmt.Errorf("%w: ack %s: %w", ErrUncertain, c.item.Name, err)
			}
			return err
		}
		if sid != c.sid {
			return c.sessionGone(ctx)
		}
		if c.ambiguous {
			done, err := c.learn(ctx)
			if done || err != nil {
				return err
			}
		}
		if c.gone.Load() {
			c.end(claimReleased, fmt.Errorf("%w: %w: claim node %s", ErrClaimLost, recipes.ErrNodeDeleted, c.path))
			return fmt.Errorf("%w: %s: claim node deleted", ErrClaimLost, c.item.Name)
		}
		cv := c.cv.Load()
		c.ours.Store(true)
		resp, err := q.s.Conn().Multi(
			&zk.CheckVersionRequest{Path: c.path, Version: cv},
			&zk.DeleteRequest{Path: c.path, Version: cv},
			&zk.DeleteRequest{Path: c.ipath, Version: c.iv},
		)
		switch {
		case err == nil:
			c.end(claimAcked, recipes.ErrReleased)
			return nil
		case recipes.IsConnErr(err):
			c.ambiguous = true // c.ours stays set until the outcome is known
			if err := q.s.Pause(ctx); err != nil {
				return fmt.Errorf("%w: ack %s: %w", ErrUncertain, c.item.Name, err)
			}
			continue
		}
		c.ours.Store(false)
		switch {
		case len(resp) != 3:
			return fmt.Errorf("queue: ack %s: %w", c.item.Name, recipes.Answer(err))
		case resp[0].Error != nil:
			// Our claim node is gone or changed: not ours any more.
			c.end(claimReleased, fmt.Errorf("%w: %w: claim node %s", ErrClaimLost, recipes.ErrNodeDeleted, c.path))
			return fmt.Errorf("%w: %s: %w", ErrClaimLost, c.item.Name, err)
		case resp[2].Error == nil:
			return fmt.Errorf("queue: ack %s: %w", c.item.Name, recipes.Answer(err))
		}
		// The item is gone or changed under our claim (a Take consumer on
		// the same path, or a foreign client): give the claim back.
		q.deleteOwned(c.path, c.sid, cv)
		c.end(claimReleased, fmt.Errorf("%w: item %s: %w", recipes.ErrNodeDeleted, c.ipath, err))
		return fmt.Errorf("queue: ack %s: item changed or deleted by someone else: %w", c.item.Name, err)
	}
}

// learn reads back, under our still-live session, the outcome of an Ack
// multi whose reply was lost: the multi is all or nothing and nothing but
// this Claim deletes our claim node while our session lives, so a claim
// node still ours means the multi was not applied (done false: send it
// again), and a claim node gone with the item gone means it was. Cost: 1
// exists (+1 exists of the item when the claim node is gone).
func (c *Claim) learn(ctx context.Context) (done bool, err error) {
	var claim, item bool // the claim node is still ours; the item is there
	var version int32
	err = recipes.Exec(ctx, c.q.s, func(conn *zk.Conn, id int64) error {
		if id != c.sid {
			return errClaimDied
		}
		ok, st, err := conn.Exists(c.path)
		if err != nil {
			return err
		}
		if claim = ok && st.EphemeralOwner == c.sid; claim {
			version = st.Version
			return nil
		}
		item, _, err = conn.Exists(c.ipath)
		return err
	})
	switch {
	case errors.Is(err, errClaimDied):
		return true, c.sessionGone(ctx)
	case err != nil:
		return true, fmt.Errorf("%w: ack %s: %w", ErrUncertain, c.item.Name, err)
	case claim:
		c.ambiguous = false
		c.cv.Store(version)
		return false, nil
	case item:
		c.end(claimReleased, fmt.Errorf("%w: %w: claim node %s", ErrClaimLost, recipes.ErrNodeDeleted, c.path))
		return true, fmt.Errorf("%w: %s: claim node deleted, item still queued", ErrClaimLost, c.item.Name)
	}
	c.end(claimAcked, recipes.ErrReleased)
	return true, nil
}

// sessionGone settles a claim whose session died: its claim node went with
// it, so the item will be delivered again, unless a multi of ours may have
// removed the item first: then the item's presence decides (present:
// ErrClaimLost; gone: ErrUncertain, since another consumer may have taken
// it since). Cost: none, or 1 exists of the item.
func (c *Claim) sessionGone(ctx context.Context) error {
	lost := fmt.Errorf("%w: %s: session 0x%x is gone", ErrClaimLost, c.item.Name, c.sid)
	if !c.ambiguous {
		c.end(claimReleased, fmt.Errorf("%w: session 0x%x", recipes.ErrSessionLost, c.sid))
		return lost
	}
	ok, err := recipes.Do(ctx, c.q.s, func(conn *zk.Conn, _ int64) (bool, error) {
		ok, _, err := conn.Exists(c.ipath)
		return ok, err
	})
	switch {
	case err == nil && ok:
		c.end(claimReleased, fmt.Errorf("%w: session 0x%x", recipes.ErrSessionLost, c.sid))
		return lost
	case err == nil:
		c.end(claimReleased, fmt.Errorf("%w: session 0x%x", recipes.ErrSessionLost, c.sid))
		return fmt.Errorf("%w: ack %s: session 0x%x lost after an ack in flight, item gone", ErrUncertain, c.item.Name, c.sid)
	}
	return fmt.Errorf("%w: ack %s: %w", ErrUncertain, c.item.Name, err)
}

// Release gives the item back: Context is cancelled (recipes.ErrReleased)
// first, then our claim node is deleted with the version read when it was
// claimed (cost: 1 delete; after an ambiguous delete, the node is read
// again in the background while the session lives and deleted only while
// it is still ours: 1 exists + 1 delete per attempt). The item is delivered
// again, to this or another consumer. Wakes consumers waiting on the claims
// path. Outcomes:
//
//   - nil: the claim was live (Context not done) and our claim node is
//     deleted, or will be while our session lives (it goes with the
//     session otherwise): the item will be delivered again.
//   - an error wrapping ErrClaimLost and recipes.ErrReleased: the claim
//     was already gone (released before, session died or closed, claim
//     node deleted or replaced): the item will be delivered again anyway.
//     Nothing is sent.
//   - an error wrapping recipes.ErrReleased and the Context's cause
//     (recipes.ErrSuspended, recipes.ErrLeaseExpired): the claim may have
//     been lost before Release (Context done) but its node was still ours;
//     it is deleted as for a live claim.
//   - an error wrapping recipes.ErrReleased only: the claim was acked;
//     nothing to give back, nothing is sent.
//   - ErrUncertain: an earlier Ack may have removed the item and that
//     cannot be learned (as for Ack). After an Ack that said ErrUncertain,
//     Release first learns whether that Ack removed the item (as Ack
//     does): if it did, Release says recipes.ErrReleased; if not, it
//     releases.
//   - ctx's error: nothing was sent; the claim is unchanged.
//
// So, as for every holding (see recipes.Held.Release), Release returns nil
// only when it ended a live claim, and a second Release sends nothing and
// returns an error that errors.Is recipes.ErrReleased. A done ctx sends
// nothing.
func (c *Claim) Release(ctx context.Context) error {
	if ctx == nil {
		return recipes.ErrNilContext
	}
	if c == nil || c.q == nil {
		return ErrNilReceiver
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	err := c.release(ctx)
	if errors.Is(err, ErrClaimLost) && !errors.Is(err, recipes.ErrReleased) {
		// The claim was gone before this Release: nothing left to give
		// back, as for every holding released twice or lost.
		err = fmt.Errorf("%w (%w)", err, recipes.ErrReleased)
	}
	return err
}

// release is Release; called with c.mu held.
func (c *Claim) release(ctx context.Context) error {
	switch c.state {
	case claimAcked:
		return fmt.Errorf("queue: release %s: %w: already acked", c.item.Name, recipes.ErrReleased)
	case claimReleased:
		return fmt.Errorf("%w: %s already released or lost", ErrClaimLost, c.item.Name)
	}
	q := c.q
	if err := q.check(ctx); err != nil {
		switch {
		case c.ambiguous:
			return fmt.Errorf("%w: release %s: %w", ErrUncertain, c.item.Name, err)
		case errors.Is(err, recipes.ErrClosed):
			// The claim node went with the session.
			c.end(claimReleased, fmt.Errorf("%w (%w)", recipes.ErrClosed, recipes.ErrSessionLost))
			return fmt.Errorf("%w: %s: %w", ErrClaimLost, c.item.Name, err)
		}
		return err
	}
	if c.ambiguous && q.s.ID() == c.sid {
		// An Ack of ours may have removed the item: learn that first.
		done, err := c.learn(ctx)
		switch {
		case done && err == nil:
			return fmt.Errorf("queue: release %s: %w: already acked", c.item.Name, recipes.ErrReleased)
		case done:
			return err
		}
	}
	if c.ambiguous { // our session is gone
		return c.sessionGone(ctx)
	}
	cause := context.Cause(c.ctx) // nil while the claim is live
	if q.s.ID() != c.sid || errors.Is(cause, recipes.ErrSessionLost) {
		c.end(claimReleased, fmt.Errorf("%w: session 0x%x", recipes.ErrSessionLost, c.sid))
		return fmt.Errorf("%w: %s: %w: session 0x%x is gone", ErrClaimLost, c.item.Name, recipes.ErrSessionLost, c.sid)
	}
	c.ours.Store(true)
	if c.gone.Load() {
		c.end(claimReleased, fmt.Errorf("%w: %w: claim node %s", ErrClaimLost, recipes.ErrNodeDeleted, c.path))
		return fmt.Errorf("%w: %s: %w: claim node %s", ErrClaimLost, c.item.Name, recipes.ErrNodeDeleted, c.path)
	}
	c.end(claimReleased, recipes.ErrReleased)
	err := q.s.Conn().Delete(c.path, c.cv.Load())
	switch {
	case err == nil:
	case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrBadVersion):
		return fmt.Errorf("%w: %s: %w", ErrClaimLost, c.item.Name, err)
	case recipes.IsConnErr(err):
		q.s.DeleteGuaranteed(c.path, c.sid)
	default:
		return fmt.Errorf("queue: release %s: %w", c.item.Name, recipes.Answer(err))
	}
	// The item is ahead of our cached listing: list again next time.
	q.mu.Lock()
	q.stale = true
	q.mu.Unlock()
	if cause != nil {
		return fmt.Errorf("queue: release %s: already lost: %w (%w)", c.item.Name, cause, recipes.ErrReleased)
	}
	return nil
}
