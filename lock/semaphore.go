package lock

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Semaphore hands out at most n leases at a ZooKeeper path.
//
// Wire format: Curator's InterProcessSemaphoreV2, so Go and Java (Curator)
// processes using the same path and the same n share the leases. An
// acquirer takes the mutex at "<path>/locks" (Curator "lock-" nodes),
// creates its lease "<path>/leases/_c_<uuid36>-lease-<seq>" (protected,
// ephemeral sequential) and, still holding the mutex, waits with a child
// watch on "<path>/leases" until the leases number at most n; then it
// releases the mutex. As in Curator, every child of "<path>/leases" counts
// as a lease, and n is not stored: all peers must be configured with the
// same n. kazoo's Semaphore uses a different layout and does not
// interoperate; WithDialect(recipes.Kazoo) is rejected with ErrDialect.
//
// Invariant: at most n leases are held at once, because only the mutex
// holder can add a lease that counts as held, and it does so only after
// seeing at most n leases including its own.
//
// Watchers: only the one acquirer holding the mutex watches the leases
// parent, and each waiter for the mutex watches only the node ahead of it,
// so a mutex release wakes exactly one process and a lease release wakes the
// one acquirer waiting for a lease, plus at most the child watch left armed
// by the previous acquirer that had to wait (go-zookeeper cannot remove a
// watch; Curator leaves the same one). An acquirer that did not wait leaves
// no watch.
//
// A Semaphore is safe for concurrent use; each Acquire returns its own
// Lease.
type Semaphore struct {
	s    *recipes.Session
	path string
	n    int
	cfg  config
	err  error
}

// NewSemaphore returns a semaphore of n leases at path. It sends nothing;
// invalid arguments are reported by Acquire.
func NewSemaphore(s *recipes.Session, path string, n int, opts ...Option) *Semaphore {
	sem := &Semaphore{s: s, path: path, n: n, cfg: newConfig(opts)}
	sem.err = checkArgs(s, path, sem.cfg)
	switch {
	case sem.err != nil:
	case n < 1:
		sem.err = fmt.Errorf("%w: %d", ErrLeases, n)
	case sem.cfg.dialect.String() != recipes.Curator.String():
		sem.err = fmt.Errorf("%w: semaphore speaks Curator's format only, not %s", ErrDialect, sem.cfg.dialect)
	}
	return sem
}

// Lease is one acquired lease. It is safe for concurrent use.
type Lease struct {
	sem *Semaphore
	h   *recipes.Holding
}

// Acquire waits for a lease until ctx is done. If ctx ends first, every node
// it created is deleted before it returns. Cost, uncontended: 1 create + 1
// getChildren (mutex), 1 create (lease), 1 getChildren (leases), 1 delete
// (mutex): 5 requests (+1 getData with WithRevocation). If the session is lost meanwhile,
// Acquire starts over under the new session.
func (sem *Semaphore) Acquire(ctx context.Context) (*Lease, error) {
	if sem == nil {
		return nil, ErrNilMutex
	}
	if sem.err != nil {
		return nil, sem.err
	}
	for {
		l, err := sem.acquire(ctx)
		if err == nil {
			return l, nil
		}
		if ctx.Err() == nil && (errors.Is(err, recipes.ErrSessionLost) || errors.Is(err, recipes.ErrNodeNotFound)) {
			continue
		}
		return nil, fmt.Errorf("lock: semaphore %s: %w", sem.path, err)
	}
}

func (sem *Semaphore) acquire(ctx context.Context) (*Lease, error) {
	policy := sem.cfg.lossPolicy(sem.s)
	mu, err := recipes.Acquire(ctx, sem.s, recipes.Spec{
		Path: recipes.JoinPath(sem.path, "locks"), Dialect: recipes.Curator, Role: recipes.RoleLock,
		Data: sem.cfg.data, Policy: policy,
	})
	if err != nil {
		return nil, err
	}
	defer func() { _ = mu.Release(context.WithoutCancel(ctx)) }()
	leases := recipes.JoinPath(sem.path, "leases")
	h, err := recipes.Enter(ctx, sem.s, recipes.Spec{
		Path: leases, Dialect: recipes.Curator, Role: recipes.RoleLease,
		Data: sem.cfg.data, Policy: policy, Revocable: sem.cfg.revocable,
	})
	if err != nil {
		return nil, err
	}
	err = recipes.WaitChildren(ctx, sem.s, leases, func(children []string) (bool, error) {
		if !slices.Contains(children, h.Name()) {
			return false, fmt.Errorf("%w: %s", recipes.ErrNodeNotFound, h.Path())
		}
		if h.SessionID() != sem.s.ID() {
			return false, recipes.ErrSessionLost
		}
		return len(children) <= sem.n, nil
	})
	if err != nil {
		_ = h.Release(context.WithoutCancel(ctx))
		return nil, err
	}
	return &Lease{sem: sem, h: h}, nil
}

// Release returns the lease: Held() is cancelled, then the lease node is
// deleted, which wakes at most the one acquirer waiting for a lease. Cost:
// 1 delete (retried in the background if ambiguous). Releasing twice
// returns ErrNotHeld.
func (l *Lease) Release(ctx context.Context) error {
	if l == nil {
		return ErrNilMutex
	}
	if err := l.h.Release(ctx); err != nil {
		if errors.Is(err, recipes.ErrReleased) {
			return ErrNotHeld
		}
		return fmt.Errorf("lock: release lease: %w", err)
	}
	return nil
}

// Held returns the lease's lifetime context, cancelled with a cause that
// errors.Is a recipes sentinel the moment the lease may be lost (see
// Mutex.Held).
func (l *Lease) Held() context.Context {
	if l == nil {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(ErrNotHeld)
		return ctx
	}
	return l.h.Context()
}

// Revoked is closed when someone revoked this lease (WithRevocation).
func (l *Lease) Revoked() <-chan struct{} {
	if l == nil {
		return nil
	}
	return l.h.Revoked()
}

// Fence returns the lease's fencing token.
func (l *Lease) Fence() recipes.Fence {
	if l == nil {
		return recipes.Fence{}
	}
	return l.h.Fence()
}

// Node returns the full path of the lease node.
func (l *Lease) Node() string {
	if l == nil {
		return ""
	}
	return l.h.Path()
}

// FencedMulti runs ops in one multi guarded by the lease node's version.
// Cost: 1 multi.
func (l *Lease) FencedMulti(ctx context.Context, ops ...any) ([]zk.MultiResponse, error) {
	if l == nil {
		return nil, ErrNilMutex
	}
	res, err := recipes.FencedMulti(ctx, l.sem.s, l.h.Fence(), ops...)
	if err != nil {
		return res, fmt.Errorf("lock: %w", err)
	}
	return res, nil
}
