package lock

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/lockopt"
	"github.com/zkrecipes/zkrecipes/internal/zkcall"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
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
// interoperate; NewSemaphore rejects WithDialect(recipes.Kazoo) with
// ErrDialect.
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
	cfg  lockopt.Config
}

// NewSemaphore returns a semaphore of n leases at path. It sends nothing.
// It fails as New does, and on n < 1 (ErrLeases) or a dialect other than
// Curator's (ErrDialect); both also wrap recipes.ErrBadArgument.
func NewSemaphore(s *recipes.Session, path string, n int, opts ...Option) (*Semaphore, error) {
	cfg := lockopt.New(opts)
	if err := checkArgs(s, path, cfg, recipes.RoleLease); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("%w (%w): %d", ErrLeases, recipes.ErrBadArgument, n)
	}
	return &Semaphore{s: s, path: path, n: n, cfg: cfg}, nil
}

// Lease is one acquired lease, a recipes.Held. It is safe for concurrent
// use.
type Lease struct {
	sem *Semaphore
	h   *recipes.Holding
}

var _ recipes.Held = (*Lease)(nil)

// Acquire waits for a lease until ctx is done. If ctx ends first, every node
// it created is deleted before it returns. Cost, uncontended: 1 create + 1
// getChildren (mutex), 1 create (lease), 1 getChildren (leases), 1 delete
// (mutex): 5 requests (+1 getData with WithRevocation). An acquirer that
// must wait for a lease also watches its mutex node and its lease node (1
// getData each, in the background), so that the wait ends as soon as either
// may be lost.
//
// Acquire never returns a lease whose Context() is already done. If the mutex
// or the lease may be lost before the lease counts (the connection is
// suspended under the default loss policy, the session changes, a node is
// deleted), both are given up and Acquire starts over; the lease is always
// created under the same session as the mutex that guards it.
func (sem *Semaphore) Acquire(ctx context.Context) (*Lease, error) {
	if sem == nil {
		return nil, ErrNilMutex
	}
	for {
		l, err := sem.acquire(ctx)
		if err == nil {
			return l, nil
		}
		if ctx.Err() == nil && retryable(err) {
			continue
		}
		return nil, fmt.Errorf("lock: semaphore %s: %w", sem.path, err)
	}
}

// retryable reports whether an attempt failed because its mutex or lease
// may have been lost (so a new attempt may succeed), rather than for good.
func retryable(err error) bool {
	return !errors.Is(err, recipes.ErrClosed) && (errors.Is(err, recipes.ErrSessionLost) ||
		errors.Is(err, recipes.ErrNodeNotFound) || errors.Is(err, recipes.ErrSuspended) ||
		errors.Is(err, recipes.ErrNodeDeleted))
}

func (sem *Semaphore) acquire(ctx context.Context) (*Lease, error) {
	policy := sem.cfg.LossPolicy(sem.s)
	mu, err := recipes.Acquire(ctx, sem.s, recipes.Spec{
		Path: zkpath.Join(sem.path, "locks"), Dialect: recipes.Curator, Role: recipes.RoleLock,
		Data: sem.cfg.Data, Policy: policy,
	})
	if err != nil {
		return nil, err
	}
	defer func() { _ = mu.Release(context.WithoutCancel(ctx)) }()
	leases := zkpath.Join(sem.path, "leases")
	h, err := recipes.Enter(ctx, sem.s, recipes.Spec{
		Path: leases, Dialect: recipes.Curator, Role: recipes.RoleLease,
		Data: sem.cfg.Data, Policy: policy, Revocable: sem.cfg.Revocable,
	})
	if err != nil {
		return nil, err
	}
	// guard reports why the lease cannot count now: the mutex or the lease
	// may be lost, or the lease was created under a session other than the
	// mutex's (the session changed in between: the mutex is gone).
	guard := func() error {
		switch {
		case mu.Err() != nil:
			return fmt.Errorf("mutex %s: %w", mu.Path(), mu.Err())
		case h.Err() != nil:
			return fmt.Errorf("lease %s: %w", h.Path(), h.Err())
		case h.SessionID() != mu.SessionID():
			return fmt.Errorf("%w: lease of session 0x%x, mutex of 0x%x", recipes.ErrSessionLost, h.SessionID(), mu.SessionID())
		}
		return nil
	}
	// The wait ends when ctx does or either holding may be lost; the
	// holdings' node watches are armed only if we have to wait.
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	waiting := false
	var stops []func() bool
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	err = guard()
	if err == nil {
		err = zkcall.WaitChildren(wctx, sem.s, leases, func(children []string) (bool, error) {
			if err := guard(); err != nil {
				return false, err
			}
			if !slices.Contains(children, h.Name()) {
				return false, fmt.Errorf("%w: %s", recipes.ErrNodeNotFound, h.Path())
			}
			if h.SessionID() != sem.s.ID() {
				return false, recipes.ErrSessionLost
			}
			if len(children) <= sem.n {
				return true, nil
			}
			if !waiting {
				waiting = true
				for _, c := range []context.Context{mu.Context(), h.Context()} {
					stops = append(stops, context.AfterFunc(c, func() { cancel(guard()) }))
				}
			}
			return false, nil
		})
	}
	if err == nil {
		err = guard() // a holding may have ended after the last listing
	}
	if err != nil {
		_ = h.Release(context.WithoutCancel(ctx))
		return nil, err
	}
	return &Lease{sem: sem, h: h}, nil
}

// Release returns the lease: Context() is cancelled, then the lease node is
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

// Context returns the lease's lifetime context, cancelled with a cause that
// errors.Is a recipes sentinel the moment the lease may be lost (see
// recipes.Held). On a nil Lease it returns a context already cancelled with
// ErrNotHeld.
func (l *Lease) Context() context.Context {
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
