package barrier

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// Barrier is ZooKeeper's barrier recipe (Curator's DistributedBarrier): while
// the node at its path exists, Wait blocks; removing the node releases every
// waiter.
//
// Invariant: Wait returns nil only after it has seen the node absent (no
// waiter passes a barrier that is set). The node is persistent, so the
// barrier outlives the session that set it.
//
// A Barrier is safe for concurrent use; it keeps no state but its path.
type Barrier struct {
	s    *recipes.Session
	path string
	err  error
}

// New returns a barrier on path. Nothing is sent to ZooKeeper. Bad
// arguments (nil session, invalid path) are reported by every method.
func New(s *recipes.Session, path string) *Barrier {
	b := &Barrier{s: s, path: path}
	switch {
	case s == nil:
		b.err = fmt.Errorf("barrier: %w", recipes.ErrNilSession)
	default:
		if err := recipes.ValidateWritePath(path); err != nil {
			b.err = fmt.Errorf("barrier: %w", err)
		}
	}
	return b
}

// Path returns the barrier node's path.
func (b *Barrier) Path() string { return b.path }

func (b *Barrier) check() error {
	if b == nil {
		return ErrNilBarrier
	}
	return b.err
}

// Set raises the barrier: creates its persistent node (no error if it is
// already set). Cost: 1 create (plus 1 createContainer per missing parent
// level, the parents being container nodes). Wakes nobody.
func (b *Barrier) Set(ctx context.Context) error {
	if err := b.check(); err != nil {
		return err
	}
	parent, _ := recipes.SplitPath(b.path)
	for {
		if _, err := b.s.WaitUsable(ctx); err != nil {
			return fmt.Errorf("barrier %s: %w", b.path, err)
		}
		_, err := b.s.Conn().Create(b.path, nil, 0, b.s.ACL())
		switch {
		case err == nil, errors.Is(err, zk.ErrNodeExists):
			// ErrNodeExists also covers a retried create that was applied.
			return nil
		case errors.Is(err, zk.ErrNoNode):
			if err := b.s.EnsureParents(parent); err != nil && !recipes.IsConnErr(err) {
				return fmt.Errorf("barrier: create parents of %s: %w", b.path, err)
			}
		case recipes.IsConnErr(err):
			if err := b.s.RetryPause(ctx); err != nil {
				return fmt.Errorf("barrier %s: %w", b.path, err)
			}
		default:
			return fmt.Errorf("barrier: set %s: %w", b.path, err)
		}
	}
}

// Remove lowers the barrier: deletes its node (no error if it is not set).
// Cost: 1 delete. Wakes every waiter (each has an exists watch on the node).
func (b *Barrier) Remove(ctx context.Context) error {
	if err := b.check(); err != nil {
		return err
	}
	for {
		if _, err := b.s.WaitUsable(ctx); err != nil {
			return fmt.Errorf("barrier %s: %w", b.path, err)
		}
		err := b.s.Conn().Delete(b.path, -1)
		switch {
		case err == nil, errors.Is(err, zk.ErrNoNode):
			return nil
		case errors.Is(err, zk.ErrNotEmpty):
			return fmt.Errorf("barrier: remove %s: %w", b.path, err)
		case recipes.IsConnErr(err):
			if err := b.s.RetryPause(ctx); err != nil {
				return fmt.Errorf("barrier %s: %w", b.path, err)
			}
		default:
			return fmt.Errorf("barrier: remove %s: %w", b.path, err)
		}
	}
}

// Wait returns nil once the barrier node does not exist, waiting with an
// exists watch until it is removed or ctx is done. Cost: 1 exists, plus 1
// per watch event (removal, or a session event). Survives disconnects and
// session loss (the barrier is persistent).
func (b *Barrier) Wait(ctx context.Context) error {
	if err := b.check(); err != nil {
		return err
	}
	for {
		if _, err := b.s.WaitUsable(ctx); err != nil {
			return fmt.Errorf("barrier %s: %w", b.path, err)
		}
		ok, _, ch, err := b.s.Conn().ExistsW(b.path)
		switch {
		case err == nil && !ok:
			return nil
		case err == nil:
			select {
			case <-ch:
			case <-ctx.Done():
				return fmt.Errorf("barrier %s: %w", b.path, context.Cause(ctx))
			}
		case recipes.IsConnErr(err):
			if err := b.s.RetryPause(ctx); err != nil {
				return fmt.Errorf("barrier %s: %w", b.path, err)
			}
		default:
			return fmt.Errorf("barrier: wait %s: %w", b.path, err)
		}
	}
}
