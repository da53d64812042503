package recipes

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// Enter creates our protected node under spec.Path and returns a Holding
// for it at once, without ordering or waiting: for protocols that decide
// otherwise when the node counts (Curator's semaphore counts the leases
// while holding a mutex). spec.Predicate is ignored. Cost: 1 create (+1
// getData when the create was ambiguous or spec.Revocable).
func Enter(ctx context.Context, s *Session, spec Spec) (*Holding, error) {
	if err := spec.normalize(s); err != nil {
		return nil, err
	}
	if err := ContextError(ctx); err != nil {
		return nil, err
	}
	guid := spec.Dialect.NewGUID()
	for {
		n, err := createProtected(ctx, s, spec.Dialect, spec.Role, spec.Path, guid, spec.Data)
		if err != nil {
			return nil, err
		}
		h, err := hold(ctx, s, &spec, n)
		if errors.Is(err, errRetry) {
			continue
		}
		if err != nil {
			s.removeNode(n)
			return nil, err
		}
		return h, nil
	}
}

// WaitChildren lists parent until done(children) reports true or an error.
// The first listing sets no watch; when it must wait, it lists again with a
// child watch and waits for a change between listings. It is meant for a
// single waiter that holds a mutex guarding the parent (as in Curator's
// semaphore), so the parent watch wakes one process, never a herd; the
// uncontended path leaves no watch behind. Cost: 1 getChildren when done at
// once, else 1 getChildren per listing.
func WaitChildren(ctx context.Context, s *Session, parent string, done func(children []string) (bool, error)) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := ValidatePath(parent); err != nil {
		return err
	}
	watch := false
	for {
		if err := ContextError(ctx); err != nil {
			return err
		}
		if _, err := s.waitUsable(ctx); err != nil {
			return err
		}
		var (
			children []string
			ch       <-chan zk.Event
			err      error
		)
		if watch {
			children, _, ch, err = s.conn.ChildrenW(parent)
		} else {
			children, _, err = s.conn.Children(parent)
		}
		switch {
		case isConnErr(err):
			if err := s.retryPause(ctx); err != nil {
				return err
			}
			continue
		case errors.Is(err, zk.ErrNoNode):
			children, ch = nil, nil
		case err != nil:
			return fmt.Errorf("recipes: list %s: %w", parent, err)
		}
		ok, err := done(children)
		if ok || err != nil {
			return err
		}
		if !watch {
			watch = true
			continue
		}
		if ch == nil {
			return fmt.Errorf("recipes: %s: %w", parent, zk.ErrNoNode)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ContextError(ctx)
		}
	}
}

// Name returns the name of our node (without the parent).
func (h *Holding) Name() string { return h.node.name }
