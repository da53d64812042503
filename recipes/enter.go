package recipes

import (
	"context"
	"errors"
)

// Enter creates our protected node under spec.Path and returns a Holding
// for it at once, without ordering or waiting: for protocols that decide
// otherwise when the node counts (Curator's semaphore counts the leases
// while holding a mutex). spec.Predicate is ignored. Cost: 1 create (+1
// getData when the create was ambiguous or spec.Revocable).
func Enter(ctx context.Context, s *Session, spec Spec) (*Holding, error) {
	if err := ContextError(ctx); err != nil {
		return nil, err
	}
	if err := spec.normalize(s); err != nil {
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

// Name returns the name of our node (without the parent).
func (h *Holding) Name() string { return h.node.name }
