// Leaving: Leave ends the Node's keeping and deletes its node, and the
// deletes it retries (remove, deleteOwn, removeLater).

package persistent

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// Leave stops keeping the node and deletes it: Present is done (cause
// recipes.ErrReleased) before the node is deleted, and the Node's goroutine
// ends (after the request it has in flight, if any). The delete is
// owner-checked: a plain node is deleted only after reading it and seeing
// our session and incarnation, and then with the version read. When ctx is
// done, the connection is suspended or the delete's outcome is unknown, the
// delete goes on in the background while the session lives (guaranteed
// delete) and Leave returns nil; a node whose session is gone is gone with
// it. Closing a Node never started, or again, returns nil and sends nothing.
//
// When ctx ends before the goroutine has returned, Leave returns nil at
// once and the goroutine deletes the node itself on its way out.
//
// Cost: 1 delete for a protected node; 1 exists + 1 delete for a plain one.
// It fails only with the server's answer to a delete it cannot retry
// (zk.ErrNoAuth, ...).
func (n *Node) Leave(ctx context.Context) error {
	if n == nil {
		return ErrNilNode
	}
	if ctx == nil {
		return recipes.ErrNilContext
	}
	n.mu.Lock()
	prev := n.state
	if prev == closed {
		n.mu.Unlock()
		return nil
	}
	n.state = closed
	released := fmt.Errorf("%w: %s", recipes.ErrReleased, n.path)
	if n.present.Err() != nil {
		// Already absent: Present says closed from now on.
		n.present, n.cancel = context.WithCancelCause(context.Background())
	}
	n.cancel(released)
	n.isPresent = false
	n.broadcastLocked()
	stop, done := n.stop, n.done
	n.mu.Unlock()
	if prev != running {
		return nil
	}
	stop()
	select {
	case <-done:
	case <-ctx.Done():
		n.mu.Lock()
		if !isClosed(done) {
			// The goroutine deletes its node itself on its way out.
			n.orphan = true
			n.mu.Unlock()
			return nil
		}
		n.mu.Unlock()
	}
	n.mu.Lock()
	last := n.last
	n.mu.Unlock()
	if last == nil {
		return nil
	}
	return n.remove(ctx, last)
}

// remove deletes inc if it is still ours: at once when the session is
// usable and ctx is not done, else in the background while its session
// lives.
func (n *Node) remove(ctx context.Context, inc *incarnation) error {
	if inc.ambiguous {
		defer n.s.CleanupGUID(recipes.Curator, n.parent, inc.guid)
	}
	sid := n.s.ID()
	switch n.s.State() {
	case recipes.StateClosed:
		return nil // gone with the session
	case recipes.StateConnected, recipes.StateReconnected:
		if sid != inc.sid {
			return nil // gone with its session
		}
		if ctx.Err() == nil {
			break
		}
		fallthrough
	default:
		n.removeLater(inc)
		return nil
	}
	var err error
	if n.protected {
		// The path carries our GUID: nobody else has it.
		err = n.s.Conn().Delete(inc.path, -1)
	} else {
		err = n.deleteOwn(inc)
	}
	switch {
	case err == nil, errors.Is(err, zk.ErrNoNode):
		return nil
	case recipes.IsConnErr(err):
		n.removeLater(inc)
		return nil
	}
	return fmt.Errorf("persistent: delete %s: %w", inc.path, err)
}

// deleteOwn deletes a plain node after reading it and seeing inc's
// session and czxid. Cost: 1 exists + 1 delete (again on a version race).
func (n *Node) deleteOwn(inc *incarnation) error {
	for {
		ok, st, err := n.s.Conn().Exists(inc.path)
		switch {
		case err != nil:
			return err
		case !ok || !inc.owns(st):
			return nil // not ours: leave it
		}
		err = n.s.Conn().Delete(inc.path, st.Version)
		if !errors.Is(err, zk.ErrBadVersion) {
			return err
		}
	}
}

// removeLater is the guaranteed delete of inc, in the Session's background.
func (n *Node) removeLater(inc *incarnation) {
	if n.protected {
		n.s.DeleteGuaranteed(inc.path, 0)
		return
	}
	n.s.DeleteGuaranteed(inc.path, inc.sid)
}
