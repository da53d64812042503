// Entering a double barrier: Enter and its steps (our member node, checked
// against our session; the ready node).

package barrier

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Enter creates our ephemeral member node and returns once n members have
// entered (the "ready" node exists), or fails when ctx is done (our node is
// then deleted) or our session dies (ErrMemberLost).
//
// Cost: 1 exists (arming a watch on "ready") + 1 create + 1 getChildren;
// the member whose listing first shows n members adds 1 create of "ready"
// (one that lists "ready" itself creates nothing). Waiting costs nothing more:
// creating "ready" wakes the n-1 members waiting in Enter, once each. An
// authenticated Session's first create under the barrier's path adds 1
// getACL (recipes.CreateUnder's squatting check: an error wrapping
// recipes.ErrOpenParent under a path that lets anyone create or delete
// children).
func (d *DoubleBarrier) Enter(ctx context.Context) error {
	if err := d.begin(entering); err != nil {
		return err
	}
	ok := false
	defer func() { d.end(ok) }()
	if err := recipes.ContextError(ctx); err != nil {
		return fmt.Errorf("barrier %s: enter: %w", d.path, err)
	}
	// Watch "ready" first (Curator's order): created between our create
	// and our listing, it still wakes us.
	var ready bool
	var readyCh <-chan zk.Event
	err := recipes.Exec(ctx, d.s, func(conn *zk.Conn, _ int64) (err error) {
		ready, _, readyCh, err = conn.ExistsW(d.ready)
		return err
	})
	switch {
	case recipes.Stopped(err):
		return fmt.Errorf("barrier %s: enter: %w", d.path, err)
	case err != nil:
		return fmt.Errorf("barrier: enter %s: %w", d.path, err)
	}
	name, sid, err := d.createMember(ctx)
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.name, d.sid = name, sid
	d.mu.Unlock()
	fail := func(err error) error {
		if d.s.ID() == sid {
			d.s.DeleteGuaranteed(zkpath.Join(d.path, name), sid)
		}
		return err
	}
	if ready {
		ok = true
		return nil
	}
	for {
		children, err := recipes.Do(ctx, d.s, func(conn *zk.Conn, id int64) ([]string, error) {
			if id != sid {
				return nil, d.replaced(sid, id)
			}
			children, _, err := conn.Children(d.path)
			return children, err
		})
		switch {
		case recipes.Stopped(err):
			return fail(fmt.Errorf("barrier %s: enter: %w", d.path, err))
		case errors.Is(err, ErrMemberLost):
			return fail(err)
		case err != nil:
			return fail(fmt.Errorf("barrier: enter %s: %w", d.path, err))
		}
		members := memberNames(d.cfg.dialect, children)
		if !slices.Contains(members, name) {
			return fail(fmt.Errorf("%w (%w): %s: our node %s is gone", ErrMemberLost, recipes.ErrSessionLost, d.path, name))
		}
		if slices.Contains(children, ReadyNode) {
			// Created after our exists and before our listing (its event
			// is on its way): nothing to create.
			ok = true
			return nil
		}
		if len(members) >= d.n {
			if err := d.createReady(ctx); err != nil {
				return fail(err)
			}
			ok = true
			return nil
		}
		// Wait for "ready". Any event on its watch (created, or a session
		// event that invalidated it) makes us look again.
		select {
		case ev := <-readyCh:
			if ev.Type == zk.EventNodeCreated {
				if err := d.alive(ctx, sid); err != nil {
					return fail(err)
				}
				ok = true
				return nil
			}
		case <-ctx.Done():
			return fail(fmt.Errorf("barrier %s: enter: %w", d.path, recipes.ContextError(ctx)))
		}
		err = recipes.Exec(ctx, d.s, func(conn *zk.Conn, id int64) (err error) {
			if id != sid {
				return d.replaced(sid, id)
			}
			ready, _, readyCh, err = conn.ExistsW(d.ready)
			return err
		})
		switch {
		case recipes.Stopped(err):
			return fail(fmt.Errorf("barrier %s: enter: %w", d.path, err))
		case errors.Is(err, ErrMemberLost):
			return fail(err)
		case err != nil:
			return fail(fmt.Errorf("barrier: enter %s: %w", d.path, err))
		}
		if ready {
			ok = true
			return nil
		}
		// List again: members may have come or gone meanwhile.
	}
}

// alive fails with ErrMemberLost once the session that owns our node is
// gone, and with ctx's error.
func (d *DoubleBarrier) alive(ctx context.Context, sid int64) error {
	if err := recipes.ContextError(ctx); err != nil {
		return fmt.Errorf("barrier %s: %w", d.path, err)
	}
	id, err := d.s.WaitUsable(ctx)
	if err != nil {
		return fmt.Errorf("barrier %s: %w", d.path, err)
	}
	if id != sid {
		return d.replaced(sid, id)
	}
	return nil
}

// replaced is the ErrMemberLost of a member whose session sid was replaced
// by session id (its node went with sid).
func (d *DoubleBarrier) replaced(sid, id int64) error {
	return fmt.Errorf("%w (%w): %s: session 0x%x replaced by 0x%x", ErrMemberLost, recipes.ErrSessionLost, d.path, sid, id)
}

// createMember creates our ephemeral member node, creating the barrier path
// (as containers) when missing. A create whose outcome is unknown is sent
// again: the name is unique to us, and a NodeExists makes us look at the
// node's owner, through recipes.CreateUnder. Cost: 1 create (+1 exists when
// the node exists already; +1 getACL on an authenticated Session's first
// create under the barrier's path).
func (d *DoubleBarrier) createMember(ctx context.Context) (string, int64, error) {
	name := d.cfg.dialect.NewGUID()
	p := zkpath.Join(d.path, name)
	maybe := false // a create of ours may have been applied unseen
	fail := func(err error) (string, int64, error) {
		if maybe {
			d.s.DeleteGuaranteed(p, 0)
		}
		return "", 0, fmt.Errorf("barrier %s: enter: %w", d.path, err)
	}
	for {
		var sid int64
		err := recipes.CreateUnder(ctx, d.s, d.path, func(conn *zk.Conn, id int64) error {
			sid = id
			_, err := conn.Create(p, nil, zk.FlagEphemeral, d.s.ACLFor(p))
			maybe = maybe || err == nil || recipes.IsConnErr(err)
			return err
		})
		switch {
		case recipes.Stopped(err):
			return fail(err)
		case err == nil:
			if d.s.ID() == sid {
				return name, sid, nil
			}
			// The session changed under us: check the owner below.
		case errors.Is(err, zk.ErrNodeExists):
			// A create of ours applied earlier; see whose it is.
		default:
			return fail(err)
		}
		var ok bool
		var st *zk.Stat
		err = recipes.Exec(ctx, d.s, func(conn *zk.Conn, id int64) (err error) {
			sid = id
			ok, st, err = conn.Exists(p)
			return err
		})
		switch {
		case recipes.Stopped(err):
			return fail(err)
		case err != nil:
			return fail(fmt.Errorf("exists %s: %w", p, err))
		case ok && st.EphemeralOwner == sid:
			return name, sid, nil
		case ok:
			// Left by an older session of ours: it would count twice.
			_ = d.s.Conn().Delete(p, -1)
		}
	}
}

// createReady creates the persistent "ready" node (no error if it exists).
// Cost: 1 create.
func (d *DoubleBarrier) createReady(ctx context.Context) error {
	err := recipes.Exec(ctx, d.s, func(conn *zk.Conn, _ int64) error {
		_, err := conn.Create(d.ready, nil, 0, d.s.ACLFor(d.ready))
		return err
	})
	switch {
	case err == nil, errors.Is(err, zk.ErrNodeExists):
		return nil
	case recipes.Stopped(err):
		return fmt.Errorf("barrier %s: enter: %w", d.path, err)
	}
	return fmt.Errorf("barrier: create %s: %w", d.ready, err)
}
