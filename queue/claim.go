package queue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
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

// Claim waits for an unclaimed item and claims it. Cost: 1 create + 1
// exists (which checks that the claim node is ours and arms the claim's
// watch) + 1 getData per item; each listing (when the consumer's cached
// listing ran out) costs 1 getChildren of the queue and 1 of the claims, so
// items claimed by others are skipped without a write; an item claimed or
// acked meanwhile by another consumer costs one create (or create + exists
// + delete) more, and if a new listing still offers that item (a lagging
// server's), Claim pauses (100 ms, or until the session's state changes)
// before trying it again. While waiting, child watches on the queue path and on the
// claims path are pending: a put, an ack, a release or a claimant's death
// wakes every consumer blocked in Claim. A done ctx sends nothing, and
// neither does a Session whose claim node create is over its request limit
// (the ACL its ACL provider gives claim nodes fills the limit): that is
// recipes.ErrDataTooLarge, nor one whose session timeout leaves no lease
// (recipes.ErrLeaseTooShort: a claim could never be kept). An authenticated
// Session also reads the claims path's ACL once, before its first claim
// there (1 getACL, see recipes.CreateUnder), and fails with an error
// wrapping recipes.ErrOpenParent when anyone may create or delete claims.
func (q *Queue) Claim(ctx context.Context) (*Claim, error) {
	if err := q.check(ctx); err != nil {
		return nil, err
	}
	if _, err := q.s.LeaseBudget(); errors.Is(err, recipes.ErrLeaseTooShort) {
		return nil, fmt.Errorf("queue %s: claim: %w", q.path, err)
	}
	// Before anything is sent: a claim node's create of the longest item
	// name must fit (the ACL the session's provider gives claim nodes may
	// fill the limit; the server would drop the connection on every try).
	if err := q.checkClaim(itemPrefix(q.cfg.dialect, MaxPriority, explicitPriority) + "-2147483648"); err != nil {
		return nil, err
	}
	var refused string // the item whose claim the server's answer just refused
	var begun time.Time
	if q.s.Observer() != nil {
		begun = time.Now()
	}
	for {
		e, waits, err := q.next(ctx, waitForItem, skipClaimed)
		if err != nil {
			return nil, err
		}
		if e == nil {
			if err := wait(ctx, waits...); err != nil {
				return nil, fmt.Errorf("queue %s: claim: %w", q.path, err)
			}
			continue
		}
		if err := q.again(ctx, *e, refused); err != nil {
			return nil, err
		}
		c, err := q.claim(ctx, *e)
		if err == nil {
			q.outcome(c != nil)
		}
		if c != nil && !begun.IsZero() {
			q.s.ObserveHeld(c.ctx, "claim", c.path, c.sid, time.Since(begun))
		}
		if err != nil || c != nil {
			return c, err
		}
		refused = e.name
	}
}

// again pauses before a consumer tries the item it was just refused
// (claimed or taken by another, gone) when a new listing offers it again:
// a lagging server's listing may keep offering it, and the loop must not
// spin on the same answer. It puts e back and returns ctx's error if ctx
// ends first. No ZooKeeper calls.
func (q *Queue) again(ctx context.Context, e entry, refused string) error {
	if e.name != refused {
		return nil
	}
	if err := q.s.Pause(ctx); err != nil {
		q.unread(e)
		return fmt.Errorf("queue %s: %w", q.path, err)
	}
	return nil
}

// checkClaim refuses, with an error wrapping recipes.ErrDataTooLarge, the
// create of the claim node of item name when it exceeds the session's
// request limit. It sends nothing.
func (q *Queue) checkClaim(name string) error {
	cpath := zkpath.Join(q.cfg.claimPath, name)
	req := &zk.CreateRequest{Path: cpath, Data: q.cfg.data, Acl: q.s.ACLFor(cpath), Flags: zk.FlagEphemeral}
	if err := recipes.CheckRequest(q.s.MaxData(), req); err != nil {
		return fmt.Errorf("queue %s: claim: %w", q.path, err)
	}
	return nil
}

// claim tries to claim one item; nil, nil when someone else has it.
func (q *Queue) claim(ctx context.Context, e entry) (*Claim, error) {
	if err := q.checkClaim(e.name); err != nil {
		q.unread(e)
		return nil, err
	}
	cpath := zkpath.Join(q.cfg.claimPath, e.name)
	ipath := zkpath.Join(q.path, e.name)
	var sid int64      // the session our claim node is (to be) owned by
	var sent int64     // the session of our last create
	ambiguous := false // a create of ours may have been applied unseen
	// unsure: some create of this call had an unknown outcome. A read
	// after it that finds no node does not prove that create will not
	// land (a lagging follower answers it), so a later NodeExists may be
	// our own node: it is read before the item is left to another.
	unsure := false
	giveUp := func(err error) (*Claim, error) {
		q.unread(e)
		if ambiguous {
			// Only if it turns out ours: made under the session current
			// when we sent the create, or (queued across a reconnect)
			// under the one after it.
			q.s.DeleteGuaranteed(cpath, sent)
			if cur := q.s.ID(); cur != 0 && cur != sent {
				q.s.DeleteGuaranteed(cpath, cur)
			}
		}
		return nil, err
	}
	var cv int32
	var czxid int64
	var watch *recipes.Watch
	// The claim node's path is every claimant's, so a create of unknown
	// outcome is resolved by reading, never sent blindly: the create
	// reports a connection error in lost, and recipes.CreateUnder does not
	// send it again.
	for created := false; !created; {
		if _, err := q.usable(ctx); err != nil {
			return giveUp(err)
		}
		if !ambiguous {
			var lost error
			err := recipes.CreateUnder(ctx, q.s, q.cfg.claimPath, func(conn *zk.Conn, id int64) error {
				sent = id
				_, err := conn.Create(cpath, q.cfg.data, zk.FlagEphemeral, q.s.ACLFor(cpath))
				if recipes.IsConnErr(err) {
					lost = err
					return nil
				}
				return err
			})
			switch {
			case lost != nil:
				ambiguous, unsure = true, true
				if err := q.s.Pause(ctx); err != nil {
					return giveUp(fmt.Errorf("queue %s: %w", q.path, err))
				}
				continue
			case err == nil:
				// Read it back below: that checks the owner (the session
				// may have changed under the create) and arms the watch.
				ambiguous = true
			case recipes.Stopped(err):
				return giveUp(fmt.Errorf("queue %s: %w", q.path, err))
			case errors.Is(err, zk.ErrNodeExists) && unsure:
				ambiguous = true // ours from the earlier create, or another's: read it
			case errors.Is(err, zk.ErrNodeExists):
				return nil, nil // claimed by someone else since our listing
			default:
				return nil, fmt.Errorf("queue: claim %s: %w", cpath, err)
			}
		}
		var ok bool
		var st *zk.Stat
		var w *recipes.Watch
		var cur int64 // the session current once the node was read
		err := recipes.Exec(ctx, q.s, func(_ *zk.Conn, _ int64) (err error) {
			// Read now: an armed watch's answer may predate the
			// reconnection after which our create's outcome is unknown.
			ok, st, w, err = q.s.WatchExistsNow(ctx, cpath)
			cur = q.s.ID()
			return err
		})
		switch {
		case recipes.Stopped(err):
			return giveUp(fmt.Errorf("queue %s: %w", q.path, err))
		case err != nil:
			return giveUp(fmt.Errorf("queue: claim %s: %w", cpath, err))
		case !ok:
			w.Close()
			// Not created (or gone already): create again, after a pause:
			// after a create of unknown outcome, this answer may be a
			// lagging server's, and the next one may repeat it.
			ambiguous = false
			if err := q.s.Pause(ctx); err != nil {
				return giveUp(fmt.Errorf("queue %s: %w", q.path, err))
			}
		case st.EphemeralOwner != cur:
			w.Close()
			// Someone else's claim, or ours from a session that is gone
			// (it vanishes with it): either way not ours to use or delete.
			return nil, nil
		default:
			sid, czxid, cv, watch, created = cur, st.Czxid, st.Version, w, true
		}
	}
	var data []byte
	var st *zk.Stat
	err := recipes.Exec(ctx, q.s, func(conn *zk.Conn, id int64) (err error) {
		if id != sid {
			return errClaimDied
		}
		data, st, err = conn.Get(ipath)
		return err
	})
	if err != nil {
		watch.Close()
	}
	switch {
	case err == nil:
		it := Item{Name: e.name, Priority: e.priority, Seq: e.seq, Data: data}
		return newClaim(q, it, cpath, ipath, sid, czxid, cv, st.Version, watch), nil
	case errors.Is(err, errClaimDied):
		return nil, nil // our claim died with the session; look again
	case recipes.Stopped(err):
		q.unread(e)
		q.s.DeleteGuaranteed(cpath, sid)
		return nil, fmt.Errorf("queue %s: %w", q.path, err)
	case errors.Is(err, zk.ErrNoNode):
		// Acked by its previous claimant after our listing.
		q.deleteOwned(cpath, sid, cv)
		return nil, nil
	default:
		q.deleteOwned(cpath, sid, cv)
		return nil, fmt.Errorf("queue: get %s: %w", ipath, err)
	}
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
