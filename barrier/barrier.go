package barrier

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
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
}

// New returns a barrier on path. Nothing is sent to ZooKeeper. It fails,
// wrapping a sentinel, on a nil session (recipes.ErrNilSession), an
// invalid path or one in the reserved /zookeeper tree
// (recipes.ErrInvalidPath), or a path so long that creating the node would
// exceed the session's request limit (recipes.ErrDataTooLarge). A closed
// session is reported by every method as recipes.ErrClosed.
func New(s *recipes.Session, path string) (*Barrier, error) {
	if s == nil {
		return nil, fmt.Errorf("barrier: %w", recipes.ErrNilSession)
	}
	if err := recipes.ValidateWritePath(path); err != nil {
		return nil, fmt.Errorf("barrier: %w", err)
	}
	// The largest request a Barrier sends.
	if err := recipes.CheckRequest(s.MaxData(), &zk.CreateRequest{Path: path, Acl: s.ACLFor(path)}); err != nil {
		return nil, fmt.Errorf("barrier: set: %w", err)
	}
	return &Barrier{s: s, path: path}, nil
}

// Path returns the barrier node's path.
func (b *Barrier) Path() string { return b.path }

// check reports a nil receiver or a done ctx (a done ctx sends nothing).
func (b *Barrier) check(ctx context.Context) error {
	if b == nil {
		return ErrNilReceiver
	}
	if err := recipes.ContextError(ctx); err != nil {
		return fmt.Errorf("barrier %s: %w", b.path, err)
	}
	return nil
}

// Set raises the barrier: creates its persistent node (no error if it is
// already set), through recipes.CreateUnder. Cost: 1 create (plus 1
// createContainer per missing parent level, the parents being container
// nodes; plus 1 getACL on an authenticated Session's first create under the
// parent, which fails with an error wrapping recipes.ErrOpenParent when the
// parent lets anyone create or delete children); nothing when ctx is
// already done. Wakes nobody.
func (b *Barrier) Set(ctx context.Context) error {
	if err := b.check(ctx); err != nil {
		return err
	}
	parent, _ := zkpath.Split(b.path)
	err := recipes.CreateUnder(ctx, b.s, parent, func(conn *zk.Conn, _ int64) error {
		_, err := conn.Create(b.path, nil, 0, b.s.ACLFor(b.path))
		return err
	})
	switch {
	case err == nil, errors.Is(err, zk.ErrNodeExists):
		// ErrNodeExists also covers a retried create that was applied.
		return nil
	case recipes.Stopped(err):
		return fmt.Errorf("barrier %s: %w", b.path, err)
	}
	return fmt.Errorf("barrier: set %s: %w", b.path, err)
}

// Remove lowers the barrier: deletes its node (no error if it is not set).
// Cost: 1 delete; nothing when ctx is already done. Wakes every waiter
// (each has an exists watch on the node).
func (b *Barrier) Remove(ctx context.Context) error {
	if err := b.check(ctx); err != nil {
		return err
	}
	err := recipes.Exec(ctx, b.s, func(conn *zk.Conn, _ int64) error {
		return conn.Delete(b.path, -1)
	})
	switch {
	case err == nil, errors.Is(err, zk.ErrNoNode):
		return nil
	case recipes.Stopped(err):
		return fmt.Errorf("barrier %s: %w", b.path, err)
	}
	return fmt.Errorf("barrier: remove %s: %w", b.path, err)
}

// Wait returns nil once the barrier node does not exist, waiting with an
// exists watch until it is removed or ctx is done. Cost: 1 exists, plus 1
// per watch event (removal, or a session event); nothing when ctx is
// already done. Survives disconnects and session loss (the barrier is
// persistent).
func (b *Barrier) Wait(ctx context.Context) error {
	if err := b.check(ctx); err != nil {
		return err
	}
	for {
		var ok bool
		var ch <-chan zk.Event
		err := recipes.Exec(ctx, b.s, func(conn *zk.Conn, _ int64) (err error) {
			ok, _, ch, err = conn.ExistsW(b.path)
			return err
		})
		switch {
		case err == nil && !ok:
			return nil
		case err == nil:
			select {
			case <-ch:
			case <-ctx.Done():
				return fmt.Errorf("barrier %s: %w", b.path, recipes.ContextError(ctx))
			}
		case recipes.Stopped(err):
			return fmt.Errorf("barrier %s: %w", b.path, err)
		default:
			return fmt.Errorf("barrier: wait %s: %w", b.path, err)
		}
	}
}
