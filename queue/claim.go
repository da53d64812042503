package queue

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// Claim is an item held for processing by an ephemeral claim node
// "<claim path>/<item name>" (kazoo's LockingQueue protocol): the item stays
// in the queue, invisible to other claimants, until Ack removes it or
// Release returns it. If the claimant's session dies the claim node
// vanishes with it and the item is delivered again: at-least-once
// processing.
//
// Ack or Release every claim: until then the claim node lives as long as
// the session, and so does the claim's registration with the session.
//
// A Claim is safe for concurrent use; Ack and Release take effect once.
type Claim struct {
	q     *Queue
	item  Item
	path  string // claim node
	ipath string // item node
	sid   int64  // session that owns the claim node

	ctx    context.Context
	cancel context.CancelCauseFunc

	mu   sync.Mutex
	done bool
}

// newClaim ties the claim's context to the session's state: it is cancelled
// when the claim may be lost (suspended, with the session's default loss
// policy recipes.StepDownOnSuspend; session lost; closed), and when the
// claim is acked or released.
func newClaim(q *Queue, it Item, cpath, ipath string, sid int64) *Claim {
	c := &Claim{q: q, item: it, path: cpath, ipath: ipath, sid: sid}
	c.ctx, c.cancel = context.WithCancelCause(context.Background())
	policy := q.s.LossPolicy()
	st, id, unhook := q.s.OnStateChange(func(ch recipes.StateChange) {
		switch {
		case ch.State == recipes.StateSuspended && policy == recipes.StepDownOnSuspend:
			c.cancel(recipes.ErrSuspended)
		case ch.State == recipes.StateLost && ch.SessionID == sid:
			c.cancel(fmt.Errorf("%w: session 0x%x", recipes.ErrSessionLost, sid))
		case ch.State == recipes.StateClosed:
			c.cancel(fmt.Errorf("%w (%w)", recipes.ErrClosed, recipes.ErrSessionLost))
		}
	})
	context.AfterFunc(c.ctx, unhook)
	switch {
	case st == recipes.StateClosed:
		c.cancel(fmt.Errorf("%w (%w)", recipes.ErrClosed, recipes.ErrSessionLost))
	case id != sid:
		c.cancel(fmt.Errorf("%w: session 0x%x replaced by 0x%x", recipes.ErrSessionLost, sid, id))
	case st == recipes.StateSuspended && policy == recipes.StepDownOnSuspend:
		c.cancel(recipes.ErrSuspended)
	}
	return c
}

// Context returns a context that is cancelled the moment the claim may be
// lost, with a cause (context.Cause) that errors.Is recipes.ErrSuspended
// (connection lost, with the session's loss policy StepDownOnSuspend: the
// claim may still be acked if the session comes back), recipes.ErrSessionLost
// (the claim node is gone and the item will be delivered again) or
// recipes.ErrReleased (acked or released). Long processing should stop when
// it is done.
func (c *Claim) Context() context.Context { return c.ctx }

// Item returns the claimed item.
func (c *Claim) Item() Item { return c.item }

// SessionID returns the session that holds the claim; once the Session's ID
// differs, the claim is lost.
func (c *Claim) SessionID() int64 { return c.sid }

// Claim waits for an unclaimed item and claims it. Cost: 1 create + 1
// getData per item; each listing (when the consumer's cached listing ran
// out) costs 1 getChildren of the queue and 1 of the claims, so items
// claimed by others are skipped without a write; an item claimed or acked
// meanwhile by another consumer costs one create (or create + delete) more.
// While waiting, child watches on the queue path and on the claims path are
// pending: a put, an ack, a release or a claimant's death wakes every
// consumer blocked in Claim.
func (q *Queue) Claim(ctx context.Context) (*Claim, error) {
	if err := q.check(ctx); err != nil {
		return nil, err
	}
	for {
		e, waits, err := q.next(ctx, true, true)
		if err != nil {
			return nil, err
		}
		if e == nil {
			if err := wait(ctx, waits...); err != nil {
				return nil, fmt.Errorf("queue %s: claim: %w", q.path, err)
			}
			continue
		}
		c, err := q.claim(ctx, *e)
		if err != nil || c != nil {
			return c, err
		}
	}
}

// claim tries to claim one item; nil, nil when someone else has it.
func (q *Queue) claim(ctx context.Context, e entry) (*Claim, error) {
	conn := q.s.Conn()
	cpath := recipes.JoinPath(q.cfg.claimPath, e.name)
	ipath := recipes.JoinPath(q.path, e.name)
	var sid int64
	ambiguous := false // a create of ours may have been applied unseen
	for created := false; !created; {
		var err error
		if sid, err = q.s.WaitUsable(ctx); err != nil {
			q.unread(e)
			if ambiguous {
				q.s.DeleteGuaranteed(cpath, 0)
			}
			return nil, fmt.Errorf("queue %s: %w", q.path, err)
		}
		_, err = conn.Create(cpath, q.cfg.claimData, zk.FlagEphemeral, q.s.ACL())
		switch {
		case err == nil && q.s.ID() == sid:
			created = true
			continue
		case err == nil, errors.Is(err, zk.ErrNodeExists) && ambiguous, recipes.IsConnErr(err):
			// Created under a session we are not sure of, or maybe created
			// by an attempt whose answer was lost: look at the owner.
			ambiguous = true
		case errors.Is(err, zk.ErrNodeExists):
			return nil, nil // claimed by someone else since our listing
		case errors.Is(err, zk.ErrNoNode):
			if err := q.s.EnsureParents(q.cfg.claimPath); err != nil && !recipes.IsConnErr(err) {
				return nil, fmt.Errorf("queue: create %s: %w", q.cfg.claimPath, err)
			}
			continue
		default:
			return nil, fmt.Errorf("queue: claim %s: %w", cpath, err)
		}
		if sid, err = q.s.WaitUsable(ctx); err != nil {
			q.s.DeleteGuaranteed(cpath, 0)
			return nil, fmt.Errorf("queue %s: %w", q.path, err)
		}
		ok, st, err := conn.Exists(cpath)
		switch {
		case err != nil:
			if err := q.s.RetryPause(ctx); err != nil {
				q.s.DeleteGuaranteed(cpath, 0)
				return nil, fmt.Errorf("queue %s: %w", q.path, err)
			}
		case ok && st.EphemeralOwner == sid && q.s.ID() == sid:
			created = true
		case ok && st.EphemeralOwner != sid:
			// Someone else's claim, or ours from a session that is gone
			// (it vanishes with it): either way not ours to use.
			return nil, nil
		}
	}
	for {
		data, _, err := conn.Get(ipath)
		switch {
		case err == nil:
			it := Item{Name: e.name, Priority: e.priority, Seq: e.seq, Data: data}
			return newClaim(q, it, cpath, ipath, sid), nil
		case errors.Is(err, zk.ErrNoNode):
			// Acked by its previous claimant after our listing.
			q.deleteClaim(cpath, sid)
			return nil, nil
		case recipes.IsConnErr(err):
			if err := q.s.RetryPause(ctx); err != nil {
				q.s.DeleteGuaranteed(cpath, sid)
				return nil, fmt.Errorf("queue %s: %w", q.path, err)
			}
			if q.s.ID() != sid {
				return nil, nil // our claim died with the session; look again
			}
		default:
			q.deleteClaim(cpath, sid)
			return nil, fmt.Errorf("queue: get %s: %w", ipath, err)
		}
	}
}

// deleteClaim deletes a claim node of session sid, in the background if the
// outcome is unknown. Cost: 1 delete.
func (q *Queue) deleteClaim(cpath string, sid int64) {
	err := q.s.Conn().Delete(cpath, -1)
	if recipes.IsConnErr(err) {
		q.s.DeleteGuaranteed(cpath, sid)
	}
}

// finish marks the claim done; called with c.mu held.
func (c *Claim) finish() {
	c.done = true
	c.cancel(recipes.ErrReleased)
}

// Ack removes the item and its claim in one multi (cost: 1 multi); a
// claim lost meanwhile (session died: the item is delivered again) makes
// it fail with ErrClaimLost and remove nothing. Wakes consumers waiting on
// the queue path and on the claims path.
func (c *Claim) Ack(ctx context.Context) error {
	if c == nil || c.q == nil {
		return ErrNilQueue
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return fmt.Errorf("%w: %s already acked or released", ErrClaimLost, c.item.Name)
	}
	q := c.q
	for {
		if err := q.check(ctx); err != nil {
			return err
		}
		if q.s.ID() != c.sid {
			c.finish()
			return fmt.Errorf("%w: %s: session 0x%x is gone", ErrClaimLost, c.item.Name, c.sid)
		}
		_, err := q.s.Conn().Multi(
			&zk.DeleteRequest{Path: c.ipath, Version: -1},
			&zk.DeleteRequest{Path: c.path, Version: -1},
		)
		switch {
		case err == nil:
			c.finish()
			return nil
		case errors.Is(err, zk.ErrNoNode):
			c.finish()
			return fmt.Errorf("%w: %s: %w", ErrClaimLost, c.item.Name, err)
		case recipes.IsConnErr(err):
			// The multi is all or nothing, and while our session lives
			// nobody else removes a claimed item: if the claim is gone
			// under the same session, it was our multi.
			if err := q.s.RetryPause(ctx); err != nil {
				return fmt.Errorf("%w: ack %s: %w", ErrUncertain, c.item.Name, err)
			}
			if _, err := q.s.WaitUsable(ctx); err != nil {
				return fmt.Errorf("%w: ack %s: %w", ErrUncertain, c.item.Name, err)
			}
			if q.s.ID() != c.sid {
				continue // reported as lost above
			}
			ok, _, err := q.s.Conn().Exists(c.path)
			if err == nil && !ok {
				c.finish()
				return nil
			}
		default:
			return fmt.Errorf("queue: ack %s: %w", c.item.Name, err)
		}
	}
}

// Release gives the item back: its claim node is deleted (cost: 1 delete;
// an ambiguous delete is retried in the background while the session
// lives), and the item is delivered again, to this or another consumer.
// Wakes consumers waiting on the claims path.
func (c *Claim) Release(ctx context.Context) error {
	if c == nil || c.q == nil {
		return ErrNilQueue
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return fmt.Errorf("%w: %s already acked or released", ErrClaimLost, c.item.Name)
	}
	q := c.q
	if err := q.check(ctx); err != nil {
		return err
	}
	c.finish()
	if q.s.ID() != c.sid {
		return fmt.Errorf("%w: %s: session 0x%x is gone", ErrClaimLost, c.item.Name, c.sid)
	}
	err := q.s.Conn().Delete(c.path, -1)
	switch {
	case err == nil:
	case errors.Is(err, zk.ErrNoNode):
		return fmt.Errorf("%w: %s: %w", ErrClaimLost, c.item.Name, err)
	case recipes.IsConnErr(err):
		q.s.DeleteGuaranteed(c.path, c.sid)
	default:
		return fmt.Errorf("queue: release %s: %w", c.item.Name, err)
	}
	// The item is ahead of our cached listing: list again next time.
	q.mu.Lock()
	q.stale = true
	q.mu.Unlock()
	return nil
}
