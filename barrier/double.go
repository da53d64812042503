package barrier

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// ReadyNode is the name of the node that the n-th member to enter creates
// under the barrier path (Curator's and kazoo's "ready").
const ReadyNode = "ready"

// DoubleBarrier is ZooKeeper's double barrier: n members enter, and nobody
// gets past Enter before n have entered; they compute; then nobody gets
// past Leave before all have left. The wire format is Curator's
// DistributedDoubleBarrier: each member is an ephemeral node
// "<path>/<uuid36>" (kazoo's DoubleBarrier: "<uuid hex32>", WithDialect),
// and the member that sees n members creates the persistent node
// "<path>/ready", which releases everyone waiting in Enter.
//
// Invariants: Enter returns nil only after "ready" existed, which it does
// only after n member nodes existed at once (members are the children
// named by a GUID in the dialect's form; other children are ignored); Leave returns nil only after
// every member node is gone. Members are ephemeral: a member whose session
// dies drops out (it no longer counts toward n, and Leave does not wait for
// it), and its own Enter or Leave fails with ErrMemberLost.
//
// A DoubleBarrier is one member: use one per participant. Its methods are
// safe for concurrent use, but Enter and Leave are meant to be called in
// turn.
type DoubleBarrier struct {
	s     *recipes.Session
	path  string
	n     int
	cfg   config
	ready string

	mu      sync.Mutex
	busy    bool
	entered bool
	name    string // our member node, "" when none
	sid     int64  // the session that owns it
}

// Option configures a DoubleBarrier.
type Option func(*config)

type config struct {
	dialect recipes.Dialect
}

// WithDialect selects the member names: recipes.Curator (the default,
// "<uuid36>") or recipes.Kazoo ("<uuid hex32>"). Both use "ready".
func WithDialect(d recipes.Dialect) Option {
	return func(c *config) { c.dialect = d }
}

// NewDouble returns a member of the double barrier on path for n members.
// Nothing is sent to ZooKeeper. It fails, wrapping a sentinel, on a nil
// session (recipes.ErrNilSession), n < 1 (ErrMembers, also
// recipes.ErrBadArgument), an invalid path or one in the reserved
// /zookeeper tree (recipes.ErrInvalidPath), or a path so long that
// creating a member node would exceed the session's request limit
// (recipes.ErrDataTooLarge). A closed session is reported by every method
// as recipes.ErrClosed.
func NewDouble(s *recipes.Session, path string, n int, opts ...Option) (*DoubleBarrier, error) {
	cfg := config{dialect: recipes.Curator}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if s == nil {
		return nil, fmt.Errorf("barrier: %w", recipes.ErrNilSession)
	}
	if n < 1 {
		return nil, fmt.Errorf("%w (%w): %d", ErrMembers, recipes.ErrBadArgument, n)
	}
	if err := recipes.ValidateWritePath(path); err != nil {
		return nil, fmt.Errorf("barrier: %w", err)
	}
	if err := recipes.CheckRequest(s.MaxData(), &zk.CreateRequest{
		// The largest request a member sends: its member node's create
		// (a GUID of at most 36 characters).
		Path: zkpath.Join(path, "00000000-0000-0000-0000-000000000000"), Acl: s.ACLFor(zkpath.Join(path, "00000000-0000-0000-0000-000000000000")), Flags: zk.FlagEphemeral,
	}); err != nil {
		return nil, fmt.Errorf("barrier: enter: %w", err)
	}
	return &DoubleBarrier{s: s, path: path, n: n, cfg: cfg, ready: zkpath.Join(path, ReadyNode)}, nil
}

// Path returns the barrier's path.
func (d *DoubleBarrier) Path() string { return d.path }

// Name returns our member node's name, "" when we are not a member.
func (d *DoubleBarrier) Name() string {
	if d == nil {
		return ""
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.name
}

// phase says which call begin marks.
type phase bool

const (
	leaving  phase = false // Leave
	entering phase = true  // Enter
)

// begin marks an Enter or Leave in progress.
func (d *DoubleBarrier) begin(enter phase) error {
	if d == nil {
		return ErrNilReceiver
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.busy || (enter == entering && d.entered):
		if enter {
			return fmt.Errorf("%w: %s", ErrAlreadyEntered, d.path)
		}
		return fmt.Errorf("%w: %s: Enter or Leave in progress", ErrNotEntered, d.path)
	case enter == leaving && !d.entered:
		return fmt.Errorf("%w: %s", ErrNotEntered, d.path)
	}
	d.busy = true
	return nil
}

func (d *DoubleBarrier) end(entered bool) {
	d.mu.Lock()
	d.busy, d.entered = false, entered
	if !entered {
		d.name, d.sid = "", 0
	}
	d.mu.Unlock()
}

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

// memberNames returns the children that are members in dialect d (named
// by a GUID in d's form: 36 characters with dashes for Curator, 32 hex
// digits for kazoo), sorted by name: the order of ZooKeeper's and
// Curator's leave protocol. "ready" and foreign nodes are ignored, so a
// stray node under the path cannot hold the barrier. Pure.
func memberNames(d recipes.Dialect, children []string) []string {
	out := make([]string, 0, len(children))
	for _, c := range children {
		if isMember(d, c) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// isMember reports whether name is a GUID in dialect d's form. Pure.
func isMember(d recipes.Dialect, name string) bool {
	dashes := d.String() != recipes.Kazoo.String()
	if (dashes && len(name) != 36) || (!dashes && len(name) != 32) {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
			if dashes && (i == 8 || i == 13 || i == 18 || i == 23) {
				return false
			}
		case c == '-' && dashes && (i == 8 || i == 13 || i == 18 || i == 23):
		default:
			return false
		}
	}
	return true
}

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

// Members returns the children that are double-barrier members in dialect
// d (a GUID in d's form), sorted by name: the order of the leave protocol.
// It is the parsing DoubleBarrier itself uses, exported for tools that
// inspect a barrier. Pure.
func Members(d recipes.Dialect, children []string) []string { return memberNames(d, children) }
