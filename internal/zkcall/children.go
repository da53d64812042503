package zkcall

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// listing is one answer of WaitChildren's call.
type listing struct {
	children []string
	ch       <-chan zk.Event
	answer   error // the server's error answer, other than ErrNoNode
}

// WaitChildren lists parent until done(children) reports true or an error.
// The first listing sets no watch; when it must wait, it lists again with a
// child watch and waits for a change between listings. It is meant for a
// single waiter that holds a mutex guarding the parent (as in Curator's
// semaphore), so the parent watch wakes one process, never a herd; the
// uncontended path leaves no watch behind. A missing parent lists as no
// children. Cost: 1 getChildren when done at once, else 1 getChildren per
// listing (each retried through Do on connection errors).
func WaitChildren(ctx context.Context, s *recipes.Session, parent string, done func(children []string) (bool, error)) error {
	if s == nil || s.Conn() == nil {
		return recipes.ErrNilSession
	}
	if err := recipes.ValidatePath(parent); err != nil {
		return err
	}
	watch := false
	for {
		l, err := Do(ctx, s, func(conn *zk.Conn, _ int64) (l listing, err error) {
			if watch {
				l.children, _, l.ch, err = conn.ChildrenW(parent)
			} else {
				l.children, _, err = conn.Children(parent)
			}
			switch {
			case errors.Is(err, zk.ErrNoNode):
				return listing{}, nil
			case err != nil && !IsConnErr(err):
				return listing{answer: err}, nil
			}
			return l, err
		})
		switch {
		case err != nil:
			return err // ctx's, or ErrNilSession / ErrClosed
		case l.answer != nil:
			return fmt.Errorf("recipes: list %s: %w", parent, l.answer)
		}
		ok, err := done(l.children)
		if ok || err != nil {
			return err
		}
		if !watch {
			watch = true
			continue
		}
		if l.ch == nil {
			return fmt.Errorf("recipes: %s: %w", parent, zk.ErrNoNode)
		}
		select {
		case <-l.ch:
		case <-ctx.Done():
			return recipes.ContextError(ctx)
		}
	}
}
