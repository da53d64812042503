// Changing and ending a registration: Update rewrites the instance, Leave
// deletes it; both take the Registration's write slot (lock).

package discovery

import (
	"context"
	"fmt"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// lock takes the write slot, or fails with ctx's error.
func (r *Registration) lock(ctx context.Context) error {
	select {
	case r.op <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("discovery %s: %w", r.path, recipes.ContextError(ctx))
	}
}

// Update replaces the registered instance's data with inst (Curator's
// updateService): same name and id (else ErrInvalidInstance), an empty
// ServiceType or a zero RegistrationTime keep the registered ones, and the
// service type cannot change (its node's mode would). inst is checked as
// by Register. A Dynamic node is written by its persistent.Node
// (SetData): on our node only, with its version; while the node is absent
// Update waits for its re-creation, which carries the new data (and if ctx
// ends first, the data is still recorded for it). A Static or Permanent
// node is likewise written only while it is the node this Registration
// created (its czxid, as for Leave), with the version read, and
// created again if it is gone; when another registrant's node holds the
// path (it replaced ours), Update leaves it alone and fails with an error
// wrapping zk.ErrNodeExists (Curator writes whatever node holds the path).
// Cost: 1 setData (Dynamic: +1 exists, the Node's watch set again after
// its own write; Static: +1 exists, the owner check); nothing when ctx is
// done. Fails with ErrUnregistered after Leave.
func (r *Registration) Update(ctx context.Context, inst Instance) error {
	if r == nil {
		return ErrNilReceiver
	}
	if ctx == nil {
		return recipes.ErrNilContext
	}
	if err := recipes.ContextError(ctx); err != nil {
		return fmt.Errorf("discovery %s: %w", r.path, err)
	}
	if err := r.lock(ctx); err != nil {
		return err
	}
	defer func() { <-r.op }()
	if r.done {
		return fmt.Errorf("%w: %s", ErrUnregistered, r.path)
	}
	if inst.Name != r.inst.Name || inst.ID != r.inst.ID {
		return fmt.Errorf("%w: update of %s names %q/%q: %w", ErrInvalidInstance, r.path, inst.Name, inst.ID, recipes.ErrBadArgument)
	}
	if inst.ServiceType == "" {
		inst.ServiceType = r.inst.ServiceType
	}
	if inst.ServiceType != r.inst.ServiceType {
		return fmt.Errorf("%w: update of %s changes its service type from %s to %s: %w", ErrInvalidInstance, r.path, r.inst.ServiceType, inst.ServiceType, recipes.ErrBadArgument)
	}
	if inst.RegistrationTime.IsZero() {
		inst.RegistrationTime = r.inst.RegistrationTime
	}
	_, data, err := r.d.prepare(inst)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.inst = inst
	r.mu.Unlock()
	r.data = data
	if r.node != nil {
		err = r.node.SetData(ctx, data)
	} else {
		err = r.setOurs(ctx)
	}
	if err != nil {
		return fmt.Errorf("discovery: update %s: %w", r.path, err)
	}
	return nil
}

// Leave stops keeping the node and deletes it (Curator's
// unregisterService); Present is then done with recipes.ErrReleased. A
// Dynamic node is deleted by its persistent.Node, only while it is ours
// (ephemeral owner and czxid), so another registrant's node at the same
// path is left alone; a Static or Permanent one likewise only while it is
// the node this Registration created (its czxid, learnt from the create's
// reply; see recipes.Session.DeleteOwned for the one round trip in which a
// replacement could still be deleted). When ctx ends or the connection
// fails before the delete is answered, the delete goes on in the
// background (a guaranteed delete, with the same check: a Static node
// under any later session, a Dynamic node while its session lives, as it
// goes with its session anyway): a Static node's Leave then returns
// ctx's error, a Dynamic one's nil. On a closed
// Session the error wraps recipes.ErrClosed (a Dynamic node went with the
// session). Cost: 1 exists + 1 delete. With a done ctx, or one that ends
// while an Update is in progress, nothing is sent and nothing changes:
// Leave returns ctx's error and may be called again. Leaving
// again after success returns ErrUnregistered.
func (r *Registration) Leave(ctx context.Context) error {
	if r == nil {
		return ErrNilReceiver
	}
	if ctx == nil {
		return recipes.ErrNilContext
	}
	if err := recipes.ContextError(ctx); err != nil {
		return fmt.Errorf("discovery %s: %w", r.path, err)
	}
	if err := r.lock(ctx); err != nil {
		return err
	}
	defer func() { <-r.op }()
	if r.done {
		return fmt.Errorf("%w: %s", ErrUnregistered, r.path)
	}
	r.done = true
	r.d.forget(r)
	if r.node != nil {
		if err := r.node.Leave(ctx); err != nil {
			return fmt.Errorf("discovery: unregister %s: %w", r.path, err)
		}
		if r.d.s.State() == recipes.StateClosed {
			return fmt.Errorf("discovery: unregister %s: %w", r.path, recipes.ErrClosed)
		}
		return nil
	}
	r.release(fmt.Errorf("%w: %s", recipes.ErrReleased, r.path))
	// Only our node: one that another registrant created at the path since
	// (it replaced ours) is left alone, now and by the background delete
	// that takes over when ctx ends first (nothing on a closed Session).
	if err := r.d.s.DeleteOwned(ctx, r.path, r.czxid, 0); err != nil {
		return fmt.Errorf("discovery: unregister %s: %w", r.path, err)
	}
	return nil
}
