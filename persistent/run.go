// The Node's run loop, its only writer: it creates or adopts the node,
// writes the data wanted, waits on the node's watch and on whoever holds
// the path, and pauses with a backoff after a failure. The state it
// publishes is in state.go.

package persistent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// errSessionChanged: a write was about to go out under a session other
// than its incarnation's; nothing was sent.
var errSessionChanged = errors.New("persistent: session changed")

// run keeps the node until ctx is done (Leave, a failed Start) or the
// Session is closed. It is the only writer: creates, data writes and the
// watch all happen here, one at a time.
func (n *Node) run(ctx context.Context, kick chan struct{}) {
	_, _, unhook := n.s.OnStateChange(func(c recipes.StateChange) {
		switch c.State {
		case recipes.StateLost:
			n.lost(c.SessionID)
		case recipes.StateClosed:
			n.absent(nil, closedCause)
		}
		nudge(kick)
	})
	var (
		cur     *incarnation
		err     error
		backoff time.Duration
	)
	defer func() {
		unhook()
		n.exit(cur, err)
	}()
	for ctx.Err() == nil {
		var sid int64
		if err = recipes.ContextError(ctx); err == nil {
			sid, err = n.s.WaitUsable(ctx)
		}
		if err != nil {
			if ctx.Err() != nil {
				err = nil
			}
			return
		}
		if cur != nil && cur.sid != sid {
			n.absent(cur, fmt.Errorf("%w: %s (session 0x%x)", recipes.ErrSessionLost, cur.path, cur.sid))
			cur = nil
		}
		if cur != nil && n.takeLost(cur.sid) {
			// StateLost was reported, and the same session is back: is
			// our node still there?
			if !n.verify(ctx, cur) {
				n.absent(cur, fmt.Errorf("%w: %s", recipes.ErrNodeDeleted, cur.path))
				cur = nil
			}
			continue
		}
		if cur == nil {
			var taken int64
			cur, taken, err = n.create(ctx)
			switch {
			case err == nil && cur == nil:
				n.waitTaken(ctx, kick, taken)
				continue
			case err == nil:
				backoff = 0
			case n.stopped(ctx, err):
				err = nil
				continue
			case !n.isEstablished():
				return // Start reports it
			default:
				n.s.Logger().Warn("persistent: create failed, retrying", "path", n.path, "err", err)
				n.absent(nil, err)
				backoff = n.pause(ctx, kick, backoff)
				err = nil
				continue
			}
		}
		if g, data := n.want(); g > cur.written {
			keep, werr := n.write(ctx, cur, g, data)
			if werr != nil && !n.stopped(ctx, werr) {
				n.writeFailed(g, werr)
				cur.written = g // not retried: SetData reports it
			}
			if !keep {
				cur = nil
			}
			continue
		}
		if !n.watch(ctx, kick, &cur) {
			err = nil
			continue
		}
	}
	err = nil
}

// stopped reports whether err only means that the loop must look again
// from the top: ctx ended, the Session closed, or a connection error.
func (n *Node) stopped(ctx context.Context, err error) bool {
	return ctx.Err() != nil || recipes.Stopped(err) || errors.Is(err, recipes.ErrClosed) ||
		recipes.IsConnErr(err) || errors.Is(err, errSessionChanged)
}

// pause waits before retrying a create the server refused: backoff
// doubles from 100 ms up to the session timeout. A kick or ctx ends it.
func (n *Node) pause(ctx context.Context, kick chan struct{}, backoff time.Duration) time.Duration {
	backoff = min(max(2*backoff, 100*time.Millisecond), n.s.SessionTimeout())
	t := time.NewTimer(backoff)
	defer t.Stop()
	select {
	case <-t.C:
	case <-kick:
	case <-ctx.Done():
	}
	return backoff
}

// create makes a new incarnation with the newest data. It returns nil and
// the owner of the node in the way when a plain path is held by another
// session (-1 for a persistent node). Cost: protected: see
// recipes.Session.CreateProtected; plain: 1 create (+1 createContainer per missing
// parent level), +1 getData when the path exists, +1 getACL on an
// authenticated Session's first create under the parent (recipes.CreateUnder's
// squatting check: ErrOpenParent under a parent open to anyone).
func (n *Node) create(ctx context.Context) (*incarnation, int64, error) {
	g, data := n.want()
	if n.protected {
		p, err := n.s.CreateProtected(ctx, recipes.Curator, n.parent, n.name, data)
		if err != nil {
			return nil, 0, err
		}
		return &incarnation{path: p.Path, guid: p.GUID, ambiguous: p.Ambiguous, sid: p.SessionID,
			czxid: p.Czxid, written: g}, 0, nil
	}
	for {
		var sid int64
		err := recipes.CreateUnder(ctx, n.s, n.parent, func(conn *zk.Conn, id int64) error {
			sid = id
			// A create resent after a connection error may find the
			// first one's node: ErrNodeExists, then its owner says.
			_, err := conn.Create(n.path, data, zk.FlagEphemeral, n.s.ACLFor(n.path))
			return err
		})
		switch {
		case err == nil:
			return &incarnation{path: n.path, sid: sid, written: g}, 0, nil
		case errors.Is(err, zk.ErrNodeExists):
			inc, taken, err := n.adopt(ctx, g, data)
			if err != nil || inc != nil || taken != 0 {
				return inc, taken, err
			}
			// Gone meanwhile: create again.
		case recipes.Stopped(err):
			return nil, 0, err
		default:
			return nil, 0, fmt.Errorf("persistent: create %s: %w", n.path, err)
		}
		if err := recipes.ContextError(ctx); err != nil {
			return nil, 0, err
		}
	}
}

// adopt reads the node found at a plain path: ours (a create of this
// session whose answer was lost) becomes the incarnation; another
// session's is reported as taken. Neither when it is gone. Cost: 1 getData.
func (n *Node) adopt(ctx context.Context, g uint64, data []byte) (*incarnation, int64, error) {
	type read struct {
		data []byte
		st   *zk.Stat
		sid  int64
	}
	r, err := recipes.Do(ctx, n.s, func(conn *zk.Conn, sid int64) (read, error) {
		d, st, err := conn.Get(n.path)
		return read{d, st, sid}, err
	})
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return nil, 0, nil
	case err != nil:
		return nil, 0, err
	case r.st.EphemeralOwner == r.sid:
		inc := &incarnation{path: n.path, sid: r.sid, czxid: r.st.Czxid, version: r.st.Version}
		if bytes.Equal(r.data, data) {
			inc.written = g
		}
		return inc, 0, nil
	case r.st.EphemeralOwner == 0:
		return nil, -1, nil
	}
	return nil, r.st.EphemeralOwner, nil
}

// waitTaken waits while another session's node holds our plain path: until
// it changes or goes (its exists watch), a kick, or ctx. Cost: 1 exists,
// or nothing when the Session already watches the path.
func (n *Node) waitTaken(ctx context.Context, kick chan struct{}, taken int64) {
	n.setTaken(taken)
	found, st, w, err := n.s.WatchExists(ctx, n.path)
	if err != nil {
		if !n.stopped(ctx, err) {
			n.s.Logger().Warn("persistent: watch", "path", n.path, "err", err)
		}
		n.pause(ctx, kick, 0)
		return
	}
	defer w.Close()
	if !found || st.EphemeralOwner != taken && !(taken < 0 && st.EphemeralOwner == 0) {
		return // gone or changed hands: try again
	}
	select {
	case <-w.Fired():
	case <-kick:
	case <-ctx.Done():
	}
}

// write puts data (generation g) on cur with the version last seen. keep
// is false when cur turned out not to be ours any more (it is then marked
// absent). Cost: 1 setData; on a version mismatch, +1 exists and the
// setData again.
func (n *Node) write(ctx context.Context, cur *incarnation, g uint64, data []byte) (keep bool, err error) {
	for {
		st, err := recipes.Do(ctx, n.s, func(conn *zk.Conn, sid int64) (*zk.Stat, error) {
			if sid != cur.sid {
				return nil, errSessionChanged
			}
			return conn.Set(cur.path, data, cur.version)
		})
		switch {
		case err == nil:
			if !cur.owns(st) {
				// Our node was replaced by another session's at the same
				// path with the same version, unseen: we wrote theirs.
				n.s.Logger().Warn("persistent: wrote a node that is not ours", "path", cur.path, "owner", st.EphemeralOwner)
				n.absent(cur, fmt.Errorf("%w: %s (%s)", ErrTaken, cur.path, owner(st.EphemeralOwner)))
				return false, nil
			}
			if cur.czxid == 0 {
				cur.czxid = st.Czxid
			}
			cur.version, cur.written = st.Version, g
			n.wrote(g)
			return true, nil
		case errors.Is(err, zk.ErrNoNode):
			n.absent(cur, fmt.Errorf("%w: %s", recipes.ErrNodeDeleted, cur.path))
			return false, nil
		case errors.Is(err, zk.ErrBadVersion):
			ok, st, err := n.stat(ctx, cur)
			if err != nil {
				return true, err
			}
			if !ok {
				n.absent(cur, fmt.Errorf("%w: %s", recipes.ErrNodeDeleted, cur.path))
				return false, nil
			}
			cur.version = st.Version // written by someone else: ours wins
		default:
			return true, err
		}
	}
}

// stat reads cur's node: ok is false when it is gone or not ours. Cost: 1
// exists.
func (n *Node) stat(ctx context.Context, cur *incarnation) (ok bool, st *zk.Stat, err error) {
	type read struct {
		found bool
		st    *zk.Stat
	}
	r, err := recipes.Do(ctx, n.s, func(conn *zk.Conn, sid int64) (read, error) {
		if sid != cur.sid {
			return read{}, nil // our session is gone, and the node with it
		}
		found, st, err := conn.Exists(cur.path)
		return read{found, st}, err
	})
	if err != nil {
		return false, nil, err
	}
	if !r.found || !cur.owns(r.st) {
		return false, nil, nil
	}
	if cur.czxid == 0 {
		cur.czxid = r.st.Czxid
	}
	return true, r.st, nil
}

// verify checks, after the same session came back from StateLost, that
// cur is still there and ours. Cost: 1 exists.
func (n *Node) verify(ctx context.Context, cur *incarnation) bool {
	ok, _, err := n.stat(ctx, cur)
	return ok || err != nil // on error: look again from the top
}

// watch sets the exists watch on cur (the Session's shared one), publishes
// cur as present once the watch has seen it ours, and waits for the watch,
// a kick or ctx. It returns false when cur is gone (*cur set to nil) or an
// error sends the loop back to the top. Cost: 1 exists, or nothing when
// the Session already watches the path.
func (n *Node) watch(ctx context.Context, kick chan struct{}, cur **incarnation) bool {
	inc := *cur
	found, st, w, err := n.s.WatchExists(ctx, inc.path)
	if err != nil {
		if !n.stopped(ctx, err) {
			n.s.Logger().Warn("persistent: watch", "path", inc.path, "err", err)
			n.pause(ctx, kick, 0)
		} else if recipes.IsConnErr(err) {
			_ = n.s.Pause(ctx)
		}
		return false
	}
	defer w.Close()
	if !found || !inc.owns(st) {
		why := fmt.Errorf("%w: %s", recipes.ErrNodeDeleted, inc.path)
		if found {
			why = fmt.Errorf("%w: %s (%s)", ErrTaken, inc.path, owner(st.EphemeralOwner))
		}
		n.absent(inc, why)
		*cur = nil
		return false
	}
	if inc.czxid == 0 {
		inc.czxid = st.Czxid
	}
	if !n.publish(inc) {
		return true // the session is not usable now: from the top
	}
	select {
	case <-w.Fired():
		if w.Event().Type == zk.EventNodeDeleted {
			n.absent(inc, fmt.Errorf("%w: %s", recipes.ErrNodeDeleted, inc.path))
			*cur = nil
			return false
		}
		// Data changed (ours or someone else's: left alone), or the
		// watch was dropped (session lost or closing): look again.
	case <-kick:
	case <-ctx.Done():
	}
	return true
}
