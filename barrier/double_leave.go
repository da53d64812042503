// Leaving a double barrier: Leave (ZooKeeper's leave protocol) and the delete
// of the round's ready node, which must never be a next round's.

package barrier

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Leave removes our member node and returns once every member has left;
// a member that sees them all gone deletes "ready" so the barrier can be
// used again, but only the ready node of the round that ended, never one
// a next round created meanwhile (see deleteReady). ZooKeeper's
// algorithm: members ordered by name; the lowest waits for the highest to
// go (exists watch) until it is alone, then deletes itself; every other
// member deletes itself and waits for the lowest to go.
//
// Cost per member: 1 getChildren + 1 exists (+1 delete) per round; the
// lowest member has one round per other member leaving, the others two;
// then, when its last listing still shows "ready", 1 exists + 1 delete.
// Wakes: each departure of a highest member wakes the lowest one; the
// lowest one's departure wakes every member still waiting.
//
// If our session died after entering, our node is already gone: Leave fails
// with ErrMemberLost (the others did not wait for us). If ctx is done first,
// Leave returns ctx's error; our node may already be deleted, and the
// DoubleBarrier is then no longer a member. Once every member has left, a
// done ctx no longer stops Leave while the session is usable: it returns
// nil only after its round's "ready" is gone, so the session may be closed
// at once. If ctx ends then while the session is not usable, Leave returns
// ctx's error and the delete of "ready" goes on in the background (while
// the Session is open) when Leave had read the node already.
func (d *DoubleBarrier) Leave(ctx context.Context) error {
	if d != nil && ctx == nil {
		return recipes.ErrNilContext
	}
	if err := d.begin(leaving); err != nil {
		return err
	}
	d.mu.Lock()
	name, sid := d.name, d.sid
	d.mu.Unlock()
	stillMember := true
	defer func() { d.end(stillMember) }()
	ours := true // our node should exist
	var last listing
	for {
		l, err := recipes.Do(ctx, d.s, func(conn *zk.Conn, id int64) (listing, error) {
			if ours && id != sid {
				return listing{}, d.replaced(sid, id)
			}
			children, st, err := conn.Children(d.path)
			if errors.Is(err, zk.ErrNoNode) {
				return listing{}, nil
			}
			l := listing{children: children}
			if st != nil {
				l.pzxid = st.Pzxid
			}
			return l, err
		})
		last = l
		children := l.children
		switch {
		case recipes.Stopped(err):
			return fmt.Errorf("barrier %s: leave: %w", d.path, err)
		case errors.Is(err, ErrMemberLost):
			stillMember = false
			return err
		case err != nil:
			return fmt.Errorf("barrier: leave %s: %w", d.path, err)
		}
		members := memberNames(d.cfg.dialect, children)
		if len(members) == 0 {
			break
		}
		i := slices.Index(members, name)
		if i < 0 && ours {
			stillMember = false
			return fmt.Errorf("%w (%w): %s: our node %s is gone", ErrMemberLost, recipes.ErrSessionLost, d.path, name)
		}
		if len(members) == 1 && i == 0 {
			if err := d.deleteOurs(ctx, name, sid); err != nil {
				return err
			}
			ours, stillMember = false, false
			break
		}
		var watch string
		if i == 0 {
			watch = members[len(members)-1]
		} else {
			watch = members[0]
		}
		var exists bool
		var ch <-chan zk.Event
		err = recipes.Exec(ctx, d.s, func(conn *zk.Conn, id int64) (err error) {
			if ours && id != sid {
				return d.replaced(sid, id)
			}
			exists, _, ch, err = conn.ExistsW(zkpath.Join(d.path, watch))
			return err
		})
		switch {
		case recipes.Stopped(err):
			return fmt.Errorf("barrier %s: leave: %w", d.path, err)
		case errors.Is(err, ErrMemberLost):
			stillMember = false
			return err
		case err != nil:
			return fmt.Errorf("barrier: leave %s: %w", d.path, err)
		}
		if i > 0 {
			if err := d.deleteOurs(ctx, name, sid); err != nil {
				return err
			}
			ours, stillMember = false, false
		}
		if exists {
			select {
			case <-ch:
			case <-ctx.Done():
				return fmt.Errorf("barrier %s: leave: %w", d.path, recipes.ContextError(ctx))
			}
		}
	}
	return d.deleteReady(ctx, last)
}

// listing is one listing of the barrier's path: its children and the
// path's pzxid (the zxid of the last change to its children) then.
type listing struct {
	children []string
	pzxid    int64
}

// deleteReady deletes "ready" once every member has left (Curator and
// kazoo do too), given last, the listing that showed no member left
// (or only us, the lowest, just before we deleted our node), but only the
// ready node of the round that has just ended. Deleted by path, the node
// could be the next round's: once every member has gone, a next round may
// enter and create its own ready before our delete arrives (a slow
// delete, or one retried after a reconnection); its members would then
// pass Enter or not depending on when each looked, and one still in Enter
// would wait for members that have moved on.
//
// Which node is ours: one that was already there at last, so its czxid is
// at most last's pzxid (creating ready changes the path's children). Such
// a node existed while no member (but us) was left: its round is over,
// and every member that counted for it has gone. A next round's ready can
// only be created after last (it needs members that last did not show),
// so its czxid is higher and it is left alone. When last shows no ready,
// ours is gone already and nothing is sent. Otherwise 1 exists reads the
// node's czxid and version, and the node is deleted at that version if it
// is ours (a node changed since is read again): the one round trip between
// that read and the delete is the only window left, as for
// recipes.Session.DeleteOwned (a next round would have to delete our ready and
// create its own within it).
//
// What stays, as in Curator: a member of a next round that enters after
// last and before our delete sees the old ready and passes Enter alone.
// Members of a next round present in the listings before last (joined
// while ours left) are waited for like our own: their names do not tell
// rounds apart.
//
// It returns nil only once our round's ready is gone (deleted by us, or
// found gone or replaced), so that a process may close its Session as
// soon as Leave returns. A done ctx does not stop these requests while
// the Session is usable (the delete is not handed to the background:
// closing the Session would stop it, and with every member doing so the
// round's ready would stay). Only when ctx ends while the Session is not
// usable does deleteReady return ctx's error, handing the delete to the
// background (recipes.Session.DeleteOwnedGuaranteed) if the node's czxid is known.
// Cost: 1 exists + 1 delete, nothing when last shows no ready.
func (d *DoubleBarrier) deleteReady(ctx context.Context, last listing) error {
	if !slices.Contains(last.children, ReadyNode) {
		return nil
	}
	hooks.BeforeReadyDelete(d.ready)
	var czxid int64 // our ready's, once read
	// Not recipes.Do: it sends nothing once ctx is done, and these requests
	// must go.
	for {
		if _, err := d.s.WaitUsable(ctx); err != nil {
			return d.readyLeft(czxid, err)
		}
		ok, st, err := d.s.Conn().Exists(d.ready)
		if err == nil {
			if !ok || st.Czxid > last.pzxid {
				return nil // gone, or a next round's
			}
			czxid = st.Czxid
			err = d.s.Conn().Delete(d.ready, st.Version)
			switch {
			case err == nil, errors.Is(err, zk.ErrNoNode):
				return nil
			case errors.Is(err, zk.ErrBadVersion):
				continue // changed since the read: read again
			}
		}
		if !recipes.IsConnErr(err) {
			return fmt.Errorf("barrier: leave %s: %w", d.path, recipes.Answer(err))
		}
		// The outcome of a delete is unknown: the next read tells.
		if err := d.s.Pause(ctx); err != nil {
			return d.readyLeft(czxid, err)
		}
	}
}

// readyLeft is deleteReady's error when it could not finish (err: ctx's
// error, or the Session's): the delete of our round's ready, czxid when
// known, goes on in the background while the Session is open.
func (d *DoubleBarrier) readyLeft(czxid int64, err error) error {
	if czxid != 0 {
		d.s.DeleteOwnedGuaranteed(d.ready, czxid, 0)
	}
	return fmt.Errorf("barrier %s: leave: %w", d.path, err)
}

// deleteOurs deletes our member node; an ambiguous delete is finished in the
// background (guaranteed delete) and treated as done. Cost: 1 delete.
func (d *DoubleBarrier) deleteOurs(ctx context.Context, name string, sid int64) error {
	p := zkpath.Join(d.path, name)
	err := d.s.Conn().Delete(p, -1)
	switch {
	case err == nil, errors.Is(err, zk.ErrNoNode):
		return nil
	case recipes.IsConnErr(err):
		d.s.DeleteGuaranteed(p, sid)
		return nil
	}
	return fmt.Errorf("barrier: leave %s: %w", d.path, recipes.Answer(err))
}
