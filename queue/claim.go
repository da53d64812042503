// The Claim a consumer holds: its state, the watch on its claim node
// that ends it when the node goes, and its fence. Claiming is in
// claim_take.go, Ack and Release in claim_end.go.

package queue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

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
// Invariant: while a Claim's Context is not done, no other consumer of this
// package holds a live claim on its item. The claim node's path is the same
// for every claimant, so this package deletes a claim node only after
// reading it and seeing its own session as the node's ephemeral owner, and
// then with the version read (never "by path"): a lost reply or an expired
// session can never make one consumer delete another's claim.
//
// Ack or Release every claim: until then the claim node lives as long as
// the session, and so do the claim's registration with the session and the
// goroutine that watches the claim node.
//
// A Claim is safe for concurrent use; Ack and Release take effect once.
type Claim struct {
	q     *Queue
	item  Item
	path  string // claim node
	ipath string // item node
	sid   int64  // session that owns the claim node
	czxid int64  // the claim node's czxid: its fencing token
	iv    int32  // item node version read at claim time

	cv atomic.Int32 // claim node version, read with our session as owner

	ctx    context.Context
	cancel context.CancelCauseFunc

	// ours: a delete of our claim node by this Claim (Ack, Release) is in
	// flight, so the watch does not call its deletion a loss. gone: the
	// watch saw the claim node deleted or owned by another session.
	ours, gone atomic.Bool

	mu        sync.Mutex
	state     claimState
	ambiguous bool // an Ack multi of ours may have been applied unseen
}

var _ recipes.Held = (*Claim)(nil)

type claimState int

const (
	claimOpen claimState = iota
	claimAcked
	claimReleased // released, or lost
)

// newClaim ties the claim's context to the session's state: it is cancelled
// when the claim may be lost (suspended, under recipes.StepDownOnSuspend,
// the default, see WithLossPolicy; session lost; closed), when the claim
// node is deleted or replaced (follow: w, the subscription to the Session's
// watch armed when the claim was read), and when the claim is acked or
// released.
func newClaim(q *Queue, it Item, cpath, ipath string, sid, czxid int64, cv, iv int32, w *recipes.Watch) *Claim {
	c := &Claim{q: q, item: it, path: cpath, ipath: ipath, sid: sid, czxid: czxid, iv: iv}
	c.cv.Store(cv)
	c.ctx, c.cancel = context.WithCancelCause(context.Background())
	policy := q.s.LossPolicy()
	if q.cfg.policy != nil {
		policy = *q.cfg.policy
	}
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
	// The Session's lease ends the claim before any server can expire the
	// session (and give the item to another consumer), whatever the policy.
	context.AfterFunc(c.ctx, q.s.OnLeaseExpired(c.cancel))
	switch {
	case st == recipes.StateClosed:
		c.cancel(fmt.Errorf("%w (%w)", recipes.ErrClosed, recipes.ErrSessionLost))
	case id != sid:
		c.cancel(fmt.Errorf("%w: session 0x%x replaced by 0x%x", recipes.ErrSessionLost, sid, id))
	case st == recipes.StateSuspended && policy == recipes.StepDownOnSuspend:
		c.cancel(recipes.ErrSuspended)
	}
	if c.ctx.Err() == nil {
		c.follow(w)
	} else {
		w.Close()
	}
	return c
}

// follow follows the claim node through w, the subscription to the
// Session's watch on it, with no goroutine of its own: the call runs on the
// goroutine that fires the watch and must not block. A deletion, or a node
// now owned by another session, cancels the claim's context with
// ErrClaimLost (and recipes.ErrNodeDeleted); a dropped watch (the session
// expired or was closed) with recipes.ErrSessionLost. Cost: 1 exists per
// re-arm, after a data change only.
func (c *Claim) follow(w *recipes.Watch) {
	w.OnFire(func(ev zk.Event) {
		w.Close()
		switch {
		case c.ctx.Err() != nil:
		case ev.Type == zk.EventNodeDeleted:
			c.lost("deleted")
		case ev.Type == zk.EventNotWatching:
			c.cancel(fmt.Errorf("%w: watch on claim %s dropped (%v)", recipes.ErrSessionLost, c.path, ev.Err))
		default:
			go c.rearm() // the data changed: read the node again
		}
	})
}

// rearm reads the claim node again, setting the Session's watch on it, and
// follows it while it is still ours.
func (c *Claim) rearm() {
	var ok bool
	var st *zk.Stat
	var w *recipes.Watch
	err := recipes.Exec(c.ctx, c.q.s, func(_ *zk.Conn, _ int64) (err error) {
		ok, st, w, err = c.q.s.WatchExists(c.ctx, c.path)
		return err
	})
	switch {
	case recipes.Stopped(err):
		return // the claim ended, or the Session is closed
	case err != nil:
		c.q.s.Logger().Warn("queue: watch claim", "path", c.path, "err", err)
		return
	case !ok:
		w.Close()
		c.lost("deleted")
		return
	case st.EphemeralOwner != c.sid:
		w.Close()
		c.lost(fmt.Sprintf("now owned by 0x%x", st.EphemeralOwner))
		return
	}
	c.cv.Store(st.Version) // still ours: deletes use the new version
	c.follow(w)
}

// lost records that the claim node is gone or not ours, and cancels the
// claim's context unless a delete of ours is in flight (Ack or Release then
// decide the cause).
func (c *Claim) lost(how string) {
	c.gone.Store(true)
	if !c.ours.Load() {
		c.cancel(fmt.Errorf("%w: %w: claim node %s %s", ErrClaimLost, recipes.ErrNodeDeleted, c.path, how))
	}
}

// Context returns a context that is cancelled the moment the claim may be
// lost, with a cause (context.Cause) that errors.Is recipes.ErrSuspended
// (connection lost, under the loss policy recipes.StepDownOnSuspend, the
// default, see WithLossPolicy: the claim may still be acked if the session
// comes back),
// recipes.ErrLeaseExpired (which also matches recipes.ErrSuspended: nothing
// sent in the last session timeout minus the lease margin was answered, so
// the server may soon expire the session; under either loss policy, this
// comes before any other consumer can claim the item), recipes.ErrSessionLost
// (the session died: the claim node is gone and the item will be delivered
// again), ErrClaimLost and recipes.ErrNodeDeleted (the claim node was
// deleted, or replaced by another consumer's, while our session lives) or
// recipes.ErrReleased (acked or released). Long processing should stop when
// it is done.
func (c *Claim) Context() context.Context { return c.ctx }

// Item returns the claimed item.
func (c *Claim) Item() Item { return c.item }

// SessionID returns the session that holds the claim; once the Session's ID
// differs, the claim is lost.
func (c *Claim) SessionID() int64 { return c.sid }

// Fence returns the claim's fencing token: Token is the claim node's czxid,
// which grows from claim to claim of the same item (each claim node is
// created after the previous one is gone), Path the claim node, Version its
// version as the claim last read it (a write to the claim node by a foreign
// client that leaves it ours is followed, not treated as a loss). The zero
// Fence for a nil Claim.
func (c *Claim) Fence() recipes.Fence {
	if c == nil {
		return recipes.Fence{}
	}
	return recipes.Fence{Token: c.czxid, Path: c.path, SessionID: c.sid, Version: c.cv.Load()}
}

// FencedMulti runs ops in one multi after a version check of our claim
// node (see recipes.FencedMulti), so that ZooKeeper rejects them (an error
// wrapping recipes.ErrFenced) once the claim node is gone: acked, released,
// or deleted with our session. Cost: 1 multi; nothing is sent once our
// session is known to be lost, or with a done ctx. A claim node's path is
// the same for every claimant, so the check is exact against consumers of
// this package (none deletes a claim node of another session), not against
// a foreign client that deletes our claim node while our session lives
// when another consumer then claims the item again before our watch sees
// the deletion. Processing that must never be done twice should also keep
// Fence().Token in its own store.
func (c *Claim) FencedMulti(ctx context.Context, ops ...any) ([]zk.MultiResponse, error) {
	if ctx == nil {
		return nil, recipes.ErrNilContext
	}
	if c == nil || c.q == nil {
		return nil, ErrNilReceiver
	}
	res, err := recipes.FencedMulti(ctx, c.q.s, c.Fence(), ops...)
	if err != nil {
		return res, fmt.Errorf("queue: %w", err)
	}
	return res, nil
}

// errClaimDied: the session that owns a claim node is gone (internal).
var errClaimDied = errors.New("queue: claim's session gone")

// end marks the claim done (acked, or released or lost) and cancels its
// context with cause; called with c.mu held.
func (c *Claim) end(s claimState, cause error) {
	c.state = s
	c.ambiguous = false
	c.cancel(cause)
}
