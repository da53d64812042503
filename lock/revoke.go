package lock

import (
	"context"
	"fmt"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// Revoke asks the holder of the node at nodePath (a full path, as listed by
// Participants or returned by Mutex.Node) to release, with Curator's
// protocol: it writes "__REVOKE__" into the node's data (ZooKeeper's
// "recoverable lock"). A holder with WithRevocation sees Revoked() closed
// and Context() cancelled with recipes.ErrRevoked; any holder's fenced writes
// fail from then on, because the node's version changed. Revocation is a
// request: the lock is free only when the holder unlocks (or its session
// ends). Cost: 1 setData. A node already gone yields an error wrapping
// zk.ErrNoNode; a node whose ACL does not let s write it (see
// recipes.DefaultAuthACL) one wrapping recipes.ErrNoAuth.
func Revoke(ctx context.Context, s *recipes.Session, nodePath string) error {
	if s == nil {
		return fmt.Errorf("lock: %w", recipes.ErrNilSession)
	}
	if err := recipes.ValidateWritePath(nodePath); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	if err := recipes.ContextError(ctx); err != nil {
		return err
	}
	if s.State() == recipes.StateClosed {
		return fmt.Errorf("lock: %w", recipes.ErrClosed)
	}
	if _, err := s.Conn().Set(nodePath, recipes.RevokeMessage, -1); err != nil {
		return fmt.Errorf("lock: revoke %s: %w", nodePath, recipes.Answer(err))
	}
	return nil
}
