// Claiming an item: Queue.Claim walks the cached listing and creates
// an ephemeral claim node for the first unclaimed item, checking the item
// is still there under the same incarnation; a refused claim lists again.

package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

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
