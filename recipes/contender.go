package recipes

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
)

// Spec describes one contest under a parent path: how our node is named,
// what it holds, and how the holding reacts to trouble. A Spec is a value;
// the core copies it and never modifies the caller's.
type Spec struct {
	Path      string     // parent of the contender nodes
	Dialect   Dialect    // zero value: Curator
	Role      Role       // zero value: RoleLock
	Predicate Predicate  // nil: Exclusive()
	Data      []byte     // data of our node
	Policy    LossPolicy // zero value (DefaultLossPolicy): the Session's (WithLossPolicy)
	// Revocable sets a data watch on our node at acquisition (cost: 1
	// getData) so that Revoke reaches the holder (Holding.Revoked).
	Revocable bool

	begun time.Time // when the acquisition began; set only for an observer
}

func (sp *Spec) normalize(s *Session) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := s.checkLease(); err != nil {
		return err
	}
	if err := ValidateParentPath(sp.Path); err != nil {
		return err
	}
	sp.Dialect = sp.Dialect.orDefault()
	if sp.Role == 0 {
		sp.Role = RoleLock
	}
	if !sp.Dialect.Supports(sp.Role) {
		return fmt.Errorf("%w: dialect %s has no %s nodes", ErrBadArgument, sp.Dialect, sp.Role)
	}
	if err := sp.checkCreate(s); err != nil {
		return err
	}
	if sp.Predicate == nil {
		sp.Predicate = Exclusive()
	}
	if sp.Policy == DefaultLossPolicy {
		sp.Policy = s.opts.policy
	}
	if s.opts.observer != nil {
		sp.begun = time.Now()
	}
	return nil
}

// checkCreate refuses a contest whose create request (our protected node's
// path, data and the session's ACL) would be larger than the server
// accepts, before anything is sent: the server would close the connection
// instead of answering, and every retry would fail the same way. Pure.
func (sp *Spec) checkCreate(s *Session) error {
	prefix, err := sp.Dialect.NodePrefix(sp.Dialect.NewGUID(), sp.Role)
	if err != nil {
		return err
	}
	return CheckRequest(s.opts.maxData, &zk.CreateRequest{
		Path: zkpath.Join(sp.Path, prefix), Data: sp.Data, Acl: s.ACLFor(zkpath.Join(sp.Path, prefix)), Flags: zk.FlagEphemeralSequential,
	})
}

// Acquire enters the contest and waits until the predicate says we hold.
//
// Protocol: protected create of our ephemeral sequential node (its name
// carries a GUID, so a create whose reply was lost is resolved by listing
// the parent), 1 getChildren of the parent, then while not holding: a
// data watch (getData) on the single node the predicate names, never on the
// parent, so a release wakes only the contender watching it. When the
// watched node goes, the known list minus that node is evaluated again
// without listing. If it holds, we hold without listing only when no node
// can have appeared ahead of us since the listing: every node that could
// block us is created as a sequential node by every client of the dialect,
// so a newcomer sorts after us (mutex, semaphore, leader latch, a reader in
// an rw lock, which waits only for writers). Otherwise (a writer of a
// Curator rw lock: Curator 5.5+ downgrades by creating an unsequenced read
// node where its write node was) 1 getChildren decides. If it does not
// hold and two or fewer nodes remain ahead,
// we watch the next one (1 getData); with more ahead — most of which have
// usually left in turn since we listed — 1 getChildren refreshes the list
// instead of 1 getData per departed node. The holding
// itself needs no request of its own: the create was made under the
// unchanged session (so we own the node), the listing showed it, and the
// create's reply gave its czxid; only when one of those is unknown (an
// ambiguous create, a session change, a missed reply) does 1 getData check
// our node. Uncontended cost: 1 create + 1 getChildren, in one round
// trip under a parent this Session has created a contender under before
// (the getChildren is written right behind the create; pipeline.go), in
// two the first time.
//
// If ctx is done while waiting, our node is deleted before Acquire returns
// (in the background if that delete is ambiguous) and the error is ctx's
// cause. If the session is lost while waiting, Acquire starts again under
// the new session. With an already-done ctx nothing is sent.
//
// Acquire never returns success with a holding whose Context is already
// done. If the connection is suspended (under StepDownOnSuspend) between
// the proof that we hold and the holding, Acquire waits for the
// connection and, under the same session, reads our node again (1
// getData) before it holds; if the session changed, it starts over; a
// revocation written into our node before we held fails with ErrRevoked
// (our node is deleted).
func Acquire(ctx context.Context, s *Session, spec Spec) (*Holding, error) {
	if err := spec.normalize(s); err != nil {
		return nil, err
	}
	if err := ContextError(ctx); err != nil {
		return nil, err
	}
	guid := spec.Dialect.NewGUID()
	prefix, err := spec.Dialect.NodePrefix(guid, spec.Role)
	if err != nil {
		return nil, err
	}
	for {
		n, l, err := createListed(ctx, s, spec.Dialect, spec.Role, spec.Path, guid, prefix, spec.Data, createAndList)
		if err != nil {
			return nil, err
		}
		h, err := contend(ctx, s, &spec, n, l, waitTurn)
		if errors.Is(err, errRetry) {
			continue
		}
		return h, err
	}
}

// TryAcquire is Acquire without waiting. It lists the parent first and
// returns ErrWouldBlock without writing anything when the predicate would
// not hold a newcomer (cost: 1 getChildren). Otherwise it creates our node
// and lists again (uncontended cost: 1 getChildren + 1 create + 1
// getChildren); if someone got ahead meanwhile, our node is deleted and the
// result is ErrWouldBlock. Like Acquire, it never returns a holding that
// is already done: a suspension at that moment is waited out (or the
// session change reported as ErrWouldBlock).
func TryAcquire(ctx context.Context, s *Session, spec Spec) (*Holding, error) {
	if err := spec.normalize(s); err != nil {
		return nil, err
	}
	if err := ContextError(ctx); err != nil {
		return nil, err
	}
	if _, err := s.waitUsable(ctx); err != nil {
		return nil, err
	}
	children, _, err := s.conn.Children(spec.Path)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return nil, fmt.Errorf("recipes: list %s: %w", spec.Path, serverErr(err))
	}
	cs := parseChildren(spec.Dialect, children, spec.Dialect.Blocking(spec.Role))
	if len(cs) > 0 {
		SortBySeq(cs, cs[0].Seq)
	}
	cs = append(cs, Contender{Role: spec.Role})
	if held, _ := spec.Predicate(cs, len(cs)-1); !held {
		return nil, ErrWouldBlock
	}
	guid := spec.Dialect.NewGUID()
	n, err := createProtected(ctx, s, spec.Dialect, spec.Role, spec.Path, guid, spec.Data)
	if err != nil {
		return nil, err
	}
	h, err := contend(ctx, s, &spec, n, nil, tryOnce)
	if errors.Is(err, errRetry) {
		return nil, ErrWouldBlock
	}
	return h, err
}

// Contenders lists the parent's children recognised by the dialect for the
// given roles, in queue order. Cost: 1 getChildren.
func Contenders(ctx context.Context, s *Session, d Dialect, parent string, roles ...Role) ([]Contender, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := ValidatePath(parent); err != nil {
		return nil, err
	}
	if err := ContextError(ctx); err != nil {
		return nil, err
	}
	children, _, err := s.conn.Children(parent)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("recipes: list %s: %w", parent, serverErr(err))
	}
	cs := parseChildren(d.orDefault(), children, roles)
	if len(cs) > 0 {
		SortBySeq(cs, cs[0].Seq)
	}
	return cs, nil
}

func parseChildren(d Dialect, children []string, roles []Role) []Contender {
	cs := make([]Contender, 0, len(children))
	for _, c := range children {
		if ct, ok := d.Parse(c, roles...); ok {
			cs = append(cs, ct)
		}
	}
	return cs
}

// whenBusy says what contend does when our node is not yet the holder.
type whenBusy bool

const (
	waitTurn whenBusy = false // wait for our turn (Acquire)
	tryOnce  whenBusy = true  // delete our node and return (TryAcquire)
)

// contend runs the wait loop for our node n. It returns errRetry when n is
// gone (session lost, or deleted by someone else) and the caller should
// create again; with tryOnce it gives up (deleting n) instead of waiting.
func contend(ctx context.Context, s *Session, spec *Spec, n *node, pre *listing, try whenBusy) (*Holding, error) {
	roles := spec.Dialect.Blocking(spec.Role)
	var cs []Contender
	self := -1
	stale := false // a node ahead went since we listed
	abandon := func(err error) (*Holding, error) {
		s.removeNode(n)
		return nil, err
	}
	for {
		if err := ContextError(ctx); err != nil {
			return abandon(err)
		}
		sid, err := s.waitUsable(ctx)
		if err != nil {
			return abandon(err)
		}
		if sid != n.sid {
			return nil, errRetry // our node went with the old session
		}
		if self < 0 {
			children, ok, err := pre.take(ctx, n)
			pre = nil
			if err != nil {
				return abandon(err)
			}
			if !ok {
				children, _, err = s.conn.Children(n.parent)
			}
			if isConnErr(err) {
				if err := s.retryPause(ctx); err != nil {
					return abandon(err)
				}
				continue
			}
			if err != nil && !errors.Is(err, zk.ErrNoNode) {
				return abandon(fmt.Errorf("recipes: list %s: %w", n.parent, serverErr(err)))
			}
			cs, self = order(s, spec.Dialect, roles, children, n)
			stale = false
			if self < 0 {
				return nil, errRetry // our node is gone
			}
		}
		held, watch := spec.Predicate(cs, self)
		if held && stale && !trustsKnownList(spec, cs, self) {
			// A node may have appeared ahead of us since we listed (a
			// foreign client's unsequenced node): only a fresh listing
			// proves that we hold.
			self, stale = -1, false
			continue
		}
		if held {
			h, err := hold(ctx, s, spec, n)
			if err != nil && !errors.Is(err, errRetry) {
				return abandon(err)
			}
			return h, err
		}
		if try {
			abandon(nil)
			return nil, errRetry
		}
		if watch < 0 || watch >= self {
			return abandon(fmt.Errorf("%w: predicate watched index %d, self %d", ErrBadArgument, watch, self))
		}
		if stale && self > 2 {
			// A node ahead went and more than two others were ahead when
			// we listed; most are usually gone by now (each held and
			// released in turn). One getChildren learns the truth, where
			// walking the known list would cost a getData per departed
			// node. With two or fewer ahead, walking costs no more.
			self, stale = -1, false
			continue
		}
		gone, err := waitGone(ctx, s, zkpath.Join(n.parent, cs[watch].Name), n.sid)
		switch {
		case errors.Is(err, errRetry):
			return nil, err
		case errors.Is(err, errTrouble):
			if err := s.retryPause(ctx); err != nil {
				return abandon(err)
			}
		case err != nil:
			return abandon(err)
		case gone:
			cs = append(cs[:watch:watch], cs[watch+1:]...)
			self--
			stale = true
		}
	}
}

// errTrouble: a request failed for connection reasons; pause, then retry.
var errTrouble = errors.New("recipes: connection trouble")

// order parses and sorts the children and returns our index (-1 if our node
// is missing). Other nodes carrying our GUID (left by an ambiguous create)
// are deleted.
func order(s *Session, d Dialect, roles []Role, children []string, n *node) ([]Contender, int) {
	cs := make([]Contender, 0, len(children))
	for _, c := range children {
		if c != n.name && d.HasGUID(c, n.guid) {
			s.deleteNow(zkpath.Join(n.parent, c))
			continue
		}
		if ct, ok := d.Parse(c, roles...); ok {
			cs = append(cs, ct)
		}
	}
	SortBySeq(cs, n.seq)
	for i, c := range cs {
		if c.Name == n.name {
			return cs, i
		}
	}
	return cs, -1
}

// waitGone waits on the Session's one data watch on path (set by the first
// waiter, shared with the others; see watch.go), so a wait given up leaves
// no go-zookeeper watcher behind beyond that one. It returns gone=true once
// the node no longer exists, gone=false when the watch must be set again
// (its data changed, or the watch was dropped), errTrouble when the request
// failed for connection reasons, errRetry when the session sid is lost, or
// ctx's error.
func waitGone(ctx context.Context, s *Session, path string, sid int64) (bool, error) {
	_, _, w, err := s.WatchData(ctx, path)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return true, nil
	case isConnErr(err):
		return false, errTrouble
	case err != nil:
		return false, err
	}
	defer w.Close()
	for {
		changed := s.changes()
		select {
		case <-w.Fired():
			return w.Event().Type == zk.EventNodeDeleted, nil
		case <-ctx.Done():
			return false, ContextError(ctx)
		case <-changed:
			switch st := s.State(); {
			case st == StateClosed:
				return false, ErrClosed
			case s.ID() != sid && st != StateSuspended:
				return false, errRetry
			}
			// Suspended or reconnected: go-zookeeper re-sets the watch on
			// reconnection; keep waiting on it.
		}
	}
}

// hold checks our node and builds the holding. When the list and session
// already prove ownership and the czxid is known, it costs nothing;
// otherwise 1 getData (which also arms the holding's node watch). With
// Revocable, it always reads the data (a revocation may predate us).
//
// It never returns a holding that is already cancelled. A holding born
// cancelled (the connection was suspended, under StepDownOnSuspend, or the
// session id changed, since the listing) is dropped: after a suspension it
// waits until the connection is usable and, under the same session,
// re-verifies our node (1 getData) and builds the holding again; under a
// new session our node is gone and it returns errRetry (the caller starts
// over). A revocation found at birth fails with ErrRevoked. If ctx ends
// meanwhile, it returns ctx's error (the caller deletes our node).
func hold(ctx context.Context, s *Session, spec *Spec, n *node) (*Holding, error) {
	reread := !n.verified || !n.statted || spec.Revocable
	for {
		var h *Holding
		if reread {
			var err error
			if h, err = holdRead(ctx, s, spec, n); err != nil {
				return nil, err
			}
		} else {
			hooks.BeforeHold(n.path)
			h = newHolding(s, n, spec.Policy, nil)
		}
		cause := context.Cause(h.ctx)
		switch {
		case cause == nil:
			s.observeHolding(spec, h)
			return h, nil
		case errors.Is(cause, ErrClosed):
			return nil, ErrClosed
		case errors.Is(cause, ErrRevoked):
			return nil, fmt.Errorf("%w before we held it", cause)
		case errors.Is(cause, ErrSuspended):
			sid, err := s.waitUsable(ctx)
			if err != nil {
				return nil, err
			}
			if sid != n.sid {
				return nil, errRetry // our node went with the old session
			}
			reread = true
		default: // the session changed: our node went with the old one
			return nil, errRetry
		}
	}
}

// holdRead reads our node (1 getData, arming the holding's watch), checks
// that our session still owns it, and builds the holding.
func holdRead(ctx context.Context, s *Session, spec *Spec, n *node) (*Holding, error) {
	for {
		sid, err := s.waitUsable(ctx)
		if err != nil {
			return nil, err
		}
		data, st, w, err := s.watchDataNow(ctx, n.path)
		switch {
		case ContextError(ctx) != nil && err != nil:
			return nil, ContextError(ctx)
		case isConnErr(err):
			if err := s.retryPause(ctx); err != nil {
				return nil, err
			}
			continue
		case errors.Is(err, zk.ErrNoNode):
			return nil, errRetry
		case err != nil:
			return nil, fmt.Errorf("recipes: read %s: %w", n.path, serverErr(err))
		case st.EphemeralOwner != sid || sid != n.sid:
			w.Close()
			s.deleteNow(n.path)
			return nil, errRetry
		}
		n.verified, n.statted = true, true
		n.czxid, n.version = st.Czxid, st.Version
		hooks.BeforeHold(n.path)
		h := newHolding(s, n, spec.Policy, w)
		if string(data) == string(RevokeMessage) {
			h.dataChanged(data, st.Version)
		}
		return h, nil
	}
}

// Err returns nil while the holding's Context() is not done, else its
// cause. Like Context, the first call arms the data watch on our node
// (cost: 1 getData, once per holding, from a background goroutine), so
// that a holder that polls Err sees a deletion or a revocation of its node.
func (h *Holding) Err() error {
	h.armOnce.Do(func() { h.startWatch(nil) })
	return context.Cause(h.ctx)
}
