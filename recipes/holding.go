package recipes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"
)

// RevokeMessage is the data Curator's revocation protocol writes into a
// holder's node to ask it to release ("__REVOKE__").
var RevokeMessage = []byte("__REVOKE__")

// Holding is one acquired node: a lock, a lease, a leadership term.
//
// Invariant: while Context() is not done, our node existed with our session
// as its ephemeral owner when last checked, the session has not been lost,
// (with StepDownOnSuspend) the connection has not been suspended since, and
// the session's lease has not run out: the server cannot expire the session
// (and so delete our node and let another client acquire) within the lease
// margin from now (see Session.LeaseDeadline). Context() is cancelled the
// moment any of that may have changed, with a cause that errors.Is
// ErrSuspended (ErrLeaseExpired also matches it), ErrSessionLost (ErrClosed
// also matches it), ErrNodeDeleted, ErrRevoked or ErrReleased. A holder
// that checks Context() before each action therefore stops before anyone
// else can hold, provided the action takes effect within the margin; a
// process paused between the check and the action is not covered:
// ZooKeeper enforces the rest, a fenced write (FencedMulti) checks our
// node's version in the same transaction.
//
// Orderings, in the terms of the Go memory model: the closing of
// Context().Done() is synchronized before a receive from Revoked() that
// returns because the channel is closed, so a holder that sees Revoked
// closed sees Context done (with cause ErrRevoked, unless the holding had
// ended for another cause first); every OnLoss callback is called after
// Context().Done() is closed, in the same cancellation; and Release
// closes Context().Done() before it sends the delete of our node, so no
// other client can hold before this one's Context is done.
//
// A Holding is safe for concurrent use.
type Holding struct {
	s       *Session
	node    *node
	fence   Fence
	policy  LossPolicy
	ctx     context.Context
	cancel  context.CancelCauseFunc
	revoked chan struct{}

	armOnce    sync.Once
	revokeOnce sync.Once

	mu       sync.Mutex
	released bool

	loss lossHooks // run by cancel (loss.go)
}

// newHolding builds the holding and ties it to the session's state. w is a
// subscription to the Session's data watch on our node (nil if none); the
// holding takes it over.
func newHolding(s *Session, n *node, policy LossPolicy, w *Watch) *Holding {
	h := &Holding{
		s:       s,
		node:    n,
		fence:   Fence{Token: n.czxid, Path: n.path, SessionID: n.sid, Version: n.version},
		policy:  policy,
		revoked: make(chan struct{}),
	}
	h.ctx, h.cancel = h.lifetime()
	st, id, unhook := s.addHook(h.onState)
	context.AfterFunc(h.ctx, unhook)
	h.endWithLease()
	switch {
	case st == StateClosed:
		h.cancel(closedCause)
	case id != n.sid:
		h.cancel(fmt.Errorf("%w: session 0x%x replaced by 0x%x", ErrSessionLost, n.sid, id))
	case st == StateSuspended && policy == StepDownOnSuspend:
		h.cancel(ErrSuspended)
	}
	if w != nil {
		h.armOnce.Do(func() { h.startWatch(w) })
	}
	return h
}

// endWithLease cancels the holding at the session's lease deadline, or at
// once if the lease has already run out (see Session.LeaseDeadline). No
// goroutine per holding: the session's one lease timer cancels them all.
func (h *Holding) endWithLease() {
	context.AfterFunc(h.ctx, h.s.OnLeaseExpired(h.cancel))
}

// onState is the session hook; it only cancels.
func (h *Holding) onState(c StateChange) {
	switch c.State {
	case StateSuspended:
		if h.policy == StepDownOnSuspend {
			h.cancel(ErrSuspended)
		}
	case StateLost:
		if c.SessionID == h.node.sid {
			h.cancel(fmt.Errorf("%w: session 0x%x", ErrSessionLost, c.SessionID))
		}
	case StateConnected:
		if c.SessionID != h.node.sid {
			h.cancel(fmt.Errorf("%w: session 0x%x replaced by 0x%x", ErrSessionLost, h.node.sid, c.SessionID))
		}
	case StateClosed:
		h.cancel(closedCause)
	}
}

// Context returns the holding's lifetime context; see the type's invariant.
// The first call arms a data watch on our node if none is set yet (cost: 1
// getData, from a background goroutine that ends once the watch is set),
// so that deletion or a data change by someone else cancels it too. An
// idle holding has no goroutine of its own: the Session's event callback
// fires its watch (see WatchData).
func (h *Holding) Context() context.Context {
	h.armOnce.Do(func() { h.startWatch(nil) })
	return h.ctx
}

// Revoked returns a channel closed when someone asked the holder to release
// by writing RevokeMessage into its node. The node is watched from
// acquisition with Spec.Revocable, otherwise only once Context() was
// called. Context is done before Revoked is closed (see Holding's
// orderings).
func (h *Holding) Revoked() <-chan struct{} { return h.revoked }

// Fence returns the fencing token of the holding.
func (h *Holding) Fence() Fence { return h.fence }

// FencedMulti runs ops in one multi after a version check of our node (see
// the function FencedMulti), so ZooKeeper rejects them once the holding is
// gone. Cost: 1 multi. A nil Holding sends nothing and returns an error
// wrapping ErrFenced and ErrBadArgument.
func (h *Holding) FencedMulti(ctx context.Context, ops ...any) ([]zk.MultiResponse, error) {
	if h == nil {
		return nil, fmt.Errorf("%w: %w: nil holding", ErrFenced, ErrBadArgument)
	}
	if ctx == nil {
		return nil, ErrNilContext
	}
	return FencedMulti(ctx, h.s, h.fence, ops...)
}

// Path returns the full path of our node.
func (h *Holding) Path() string { return h.node.path }

// SessionID returns the session the holding was acquired under.
func (h *Holding) SessionID() int64 { return h.node.sid }

// startWatch follows our node: through w, a subscription to the Session's
// data watch on it, or else by setting one from the session's background.
func (h *Holding) startWatch(w *Watch) {
	if h.ctx.Err() != nil {
		w.Close()
		return
	}
	if w != nil {
		h.follow(w)
		return
	}
	h.s.background(h.arm)
}

// arm sets the Session's data watch on our node and follows it; it runs in
// the session's background and returns once the watch is set (or the
// holding has ended). Cost: 1 getData, or none when the Session already
// has a data watch on our node that has not fired. Deletion, or a node now
// owned by another session, cancels the holding; a data change by someone
// else too (see dataChanged).
func (h *Holding) arm(bg context.Context) {
	for {
		if _, err := h.s.waitUsable(bg); err != nil {
			return
		}
		if h.ctx.Err() != nil {
			return
		}
		if res, _ := h.armStep(bg); res != armRetry {
			return
		}
		if !pause(bg, h.s.changes()) {
			return
		}
	}
}

// armResult is what one attempt at arming came to.
type armResult int

const (
	armSet    armResult = iota // the watch is set and followed
	armEnded                   // the node is gone, taken or written: the holding was cancelled
	armRetry                   // a connection error: try again
	armFailed                  // another error (ctx done, Session closed, a refusal); nothing set
)

// armStep makes one attempt at setting the watch on our node and following
// it (1 getData, or none when the Session already watches it). Deletion,
// another owner or a data change by someone else cancels the holding.
// err is the failure's, for armFailed.
func (h *Holding) armStep(ctx context.Context) (armResult, error) {
	data, st, w, err := h.s.WatchData(ctx, h.node.path)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		h.cancel(fmt.Errorf("%w: %s", ErrNodeDeleted, h.node.path))
		return armEnded, nil
	case isConnErr(err):
		return armRetry, nil
	case err != nil:
		if !errors.Is(err, ErrClosed) && ContextError(ctx) == nil {
			h.s.log.Warn("recipes: watch own node", "path", h.node.path, "err", err)
		}
		return armFailed, err
	}
	if st.EphemeralOwner != h.node.sid {
		w.Close()
		h.cancel(fmt.Errorf("%w: %s now owned by 0x%x", ErrNodeDeleted, h.node.path, st.EphemeralOwner))
		return armEnded, nil
	}
	if st.Version != h.fence.Version {
		w.Close()
		h.dataChanged(data, st.Version)
		return armEnded, nil
	}
	h.follow(w)
	return armSet, nil
}

// follow waits for w's event without a goroutine: the call runs on the
// goroutine that fires the watch and must not block. A deletion cancels
// the holding; a data change (re-read to see whether it was a revocation)
// or a dropped watch (the session hook cancels if the session is gone)
// arms the watch again from the session's background.
func (h *Holding) follow(w *Watch) {
	w.OnFire(func(ev zk.Event) {
		w.Close()
		switch {
		case h.ctx.Err() != nil:
		case ev.Type == zk.EventNodeDeleted:
			h.cancel(fmt.Errorf("%w: %s", ErrNodeDeleted, h.node.path))
		default:
			h.s.background(h.arm)
		}
	})
}

// dataChanged handles a write to our node by someone else: fenced writes
// now fail (they check the version), so the holding steps down. Curator's
// revocation message also closes Revoked.
func (h *Holding) dataChanged(data []byte, version int32) {
	if bytes.Equal(data, RevokeMessage) {
		// Cancel first: whoever sees Revoked closed also sees Context done.
		h.cancel(fmt.Errorf("%w: %s", ErrRevoked, h.node.path))
		h.revokeOnce.Do(func() { close(h.revoked) })
		return
	}
	h.cancel(fmt.Errorf("%w: %s data changed (version %d)", ErrRevoked, h.node.path, version))
}

// Release gives the holding up: Context() is cancelled with ErrReleased
// first (stop using the resource before others can get it), then our node
// is deleted. Cost: 1 delete; if its outcome is ambiguous, or ctx is already
// done, or the connection is suspended, the delete continues in the
// background while the session lives (guaranteed delete). Release waits for
// the delete's answer only while ctx lasts: when ctx ends first (a link
// that stopped answering holds a request up to two thirds of the session
// timeout) it returns at once and the delete goes on in the background, as
// above. The release wakes at most the one waiter watching our node.
//
// It returns nil when it ended a live holding. As for every Held: a second
// Release (or one on a nil Holding) sends nothing and returns ErrReleased;
// a Release after the holding was lost (Context already done) returns an
// error wrapping ErrReleased and the loss's cause, and sends the delete only
// while our node may still be there (the session lives and the node was not
// deleted by someone else: after ErrSuspended, ErrLeaseExpired or
// ErrRevoked). Other errors are the server's answer to the delete.
func (h *Holding) Release(ctx context.Context) error {
	if h == nil {
		return fmt.Errorf("%w: %w: nil holding", ErrReleased, ErrBadArgument)
	}
	if ctx == nil {
		return ErrNilContext
	}
	h.mu.Lock()
	if h.released {
		h.mu.Unlock()
		return ErrReleased
	}
	h.released = true
	h.mu.Unlock()
	h.cancel(ErrReleased)
	var lost error // the holding ended before this Release
	if cause := context.Cause(h.ctx); !errors.Is(cause, ErrReleased) {
		lost = fmt.Errorf("recipes: release %s: already lost: %w (%w)", h.node.path, cause, ErrReleased)
	}
	if h.node.ambiguous {
		// A late copy of an ambiguous create may still show up.
		defer h.s.cleanupGUID(h.node.dialect, h.node.parent, h.node.guid)
	}
	if h.s.check() != nil || h.s.ID() != h.node.sid || errors.Is(lost, ErrSessionLost) {
		return lost // the session is gone, and our ephemeral node with it
	}
	if errors.Is(lost, ErrNodeDeleted) {
		return lost // deleted, or now someone else's: not ours to delete
	}
	if ctx.Err() != nil || !h.s.usableNow() {
		h.s.deleteInBackground(h.node.path, h.node.sid)
		return lost
	}
	err := h.s.deleteWithin(ctx, h.node.path, -1, h.node.sid)
	switch {
	case err == nil, errors.Is(err, zk.ErrNoNode), errors.Is(err, errDeleteAway):
		return lost
	case errors.Is(err, ErrClosed):
		return lost // closing: the session's end deletes our node
	}
	return errors.Join(lost, fmt.Errorf("recipes: release %s: %w", h.node.path, serverErr(err)))
}
