// The Node's shared state as the run loop changes it, each under n.mu
// and waking the waiters: the data wanted, what was written or failed,
// who holds the path, and which incarnation is present (publish, absent,
// lost, exit).

package persistent

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// closedCause is Present's cause once the Session is closed.
var closedCause = fmt.Errorf("%w (%w)", recipes.ErrClosed, recipes.ErrSessionLost)

// want returns the newest data and its generation.
func (n *Node) want() (uint64, []byte) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.gen, n.data
}

func (n *Node) isEstablished() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.established
}

// takeLost reports (once) whether StateLost was reported for session sid.
func (n *Node) takeLost(sid int64) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.lostSid != sid {
		return false
	}
	n.lostSid = 0
	return true
}

func (n *Node) setTaken(owner int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.taken != owner {
		n.taken = owner
		n.broadcastLocked()
	}
}

// wrote records that generation g is on our node.
func (n *Node) wrote(g uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if g > n.written {
		n.written = g
		n.broadcastLocked()
	}
}

// writeFailed records that generation g could not be written, for good.
func (n *Node) writeFailed(g uint64, err error) {
	n.s.Logger().Warn("persistent: set data failed", "path", n.path, "err", err)
	n.mu.Lock()
	defer n.mu.Unlock()
	if g > n.failedGen {
		n.failedGen, n.writeErr = g, err
		n.broadcastLocked()
	}
}

// publish makes inc the present incarnation, with a new Present context,
// unless it is already. It returns false, publishing nothing, when inc's
// session is not the Session's usable one right now (a watch set before
// may still answer from the Session's registry): the loop looks again.
func (n *Node) publish(inc *incarnation) bool {
	if st := n.s.State(); st != recipes.StateConnected && st != recipes.StateReconnected || n.s.ID() != inc.sid {
		return false
	}
	n.mu.Lock()
	if n.state != running || n.isPresent && n.inc.path == inc.path && n.inc.czxid == inc.czxid {
		n.mu.Unlock()
		return true
	}
	old := n.inc
	n.inc = *inc
	n.present, n.cancel = context.WithCancelCause(context.Background())
	n.isPresent, n.established, n.taken = true, true, 0
	if inc.written > n.written {
		n.written = inc.written
	}
	n.broadcastLocked()
	n.mu.Unlock()
	if old.ambiguous && old.guid != inc.guid {
		// Late copies of the old incarnation's ambiguous create.
		n.s.CleanupGUID(recipes.Curator, n.parent, old.guid)
	}
	return true
}

// absent ends the present incarnation's context with cause, when inc is
// the present one (or inc is nil: whichever is present).
func (n *Node) absent(inc *incarnation, cause error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.isPresent || inc != nil && (n.inc.path != inc.path || n.inc.sid != inc.sid) {
		return
	}
	n.isPresent = false
	n.cancel(cause)
	n.broadcastLocked()
}

// lost handles StateLost for session sid: the present node, if it is that
// session's, may be gone.
func (n *Node) lost(sid int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lostSid = sid // the loop checks its node of that session again
	if !n.isPresent || n.inc.sid != sid {
		return
	}
	n.isPresent = false
	n.cancel(fmt.Errorf("%w: %s (session 0x%x)", recipes.ErrSessionLost, n.inc.path, sid))
	n.broadcastLocked()
}

// exit records how the loop ended; the node left (cur) is Leave's or
// Start's to delete, or the loop's own when Leave gave up waiting.
func (n *Node) exit(cur *incarnation, err error) {
	n.mu.Lock()
	n.last, n.loopErr = cur, err
	if errors.Is(err, recipes.ErrClosed) && n.isPresent {
		n.isPresent = false
		n.cancel(closedCause)
	}
	orphan := n.orphan
	close(n.done)
	n.broadcastLocked()
	n.mu.Unlock()
	if orphan && cur != nil {
		_ = n.remove(context.Background(), cur)
	}
}
