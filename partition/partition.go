package partition

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Partition is this member's share of the set, acquired: a lock.Mutex held
// on "<path>/locks/<item>" for each of its items. It follows recipes.Held's
// contract for Context and Release; as a lock.MultiMutex it holds one
// lock per item, so Fence and FencedMulti name the item.
//
// Invariant: while Context() is not done, this member holds the lock of
// every item of the Partition, so no other member (Go or kazoo) holds any
// of them. Context() is done the moment that may change or the member is
// asked to give the items up, with a cause that errors.Is ErrRebalance
// (the members changed) or ErrStopped (the Run's stream ended), both
// recipes.ErrRevoked, or one of a lock's causes (recipes.ErrSuspended,
// recipes.ErrLeaseExpired, recipes.ErrSessionLost, recipes.ErrNodeDeleted),
// or recipes.ErrReleased after Release. The locks are deleted only by
// Release, after Context is done, or with the session: the release before
// others acquire. The member's Partitioner allocates again only once
// Release was called.
//
// A Partition is safe for concurrent use. It runs no goroutine of its own.
type Partition struct {
	items   []string      // sorted
	members []string      // the member ids it was split among
	locks   []*lock.Mutex // by item, in the order of items

	ctx    context.Context
	cancel context.CancelCauseFunc
	stops  []func() bool // untie ctx from the locks' contexts

	mu       sync.Mutex
	released bool
	done     chan struct{} // closed once the locks were given up
}

// newPartition ties a Partition's context to the locks' contexts, whose
// first call arms a data watch on each lock node (1 getData each, in the
// background).
func newPartition(members, items []string, locks []*lock.Mutex) *Partition {
	p := &Partition{items: items, members: members, locks: locks, done: make(chan struct{})}
	p.ctx, p.cancel = context.WithCancelCause(context.Background())
	for _, m := range locks {
		hctx := m.Context()
		p.stops = append(p.stops, context.AfterFunc(hctx, func() { p.cancel(context.Cause(hctx)) }))
	}
	return p
}

// live reports whether every lock is still held under the session's
// current id with the connection usable: the check before a Partition is
// handed over (no Partition is sent already lost).
func (p *Partition) live(s *recipes.Session) bool {
	if st := s.State(); st != recipes.StateConnected && st != recipes.StateReconnected {
		return false
	}
	for _, m := range p.locks {
		if m.Context().Err() != nil || m.Fence().SessionID != s.ID() {
			return false
		}
	}
	return p.ctx.Err() == nil
}

// end cancels the Context with cause (the first cause wins) and unties it
// from the locks.
func (p *Partition) end(cause error) {
	p.cancel(cause)
	for _, stop := range p.stops {
		stop()
	}
}

// takeBack ends and releases a Partition nobody was handed: it was lost,
// or the members changed, before it could be sent.
func (p *Partition) takeBack(ctx context.Context, cause error) {
	p.end(cause)
	_ = p.Release(context.WithoutCancel(ctx))
}

// Items returns the Partition's items, sorted (a copy). No ZooKeeper
// calls.
func (p *Partition) Items() []string {
	if p == nil {
		return nil
	}
	return slices.Clone(p.items)
}

// Members returns the ids of the members the set was split among when this
// Partition was allocated, sorted (a copy). No ZooKeeper calls.
func (p *Partition) Members() []string {
	if p == nil {
		return nil
	}
	return slices.Clone(p.members)
}

// Context returns the Partition's lifetime context; see the type's
// invariant for its causes. On a nil Partition it is already done
// (ErrNilPartition). No ZooKeeper calls.
func (p *Partition) Context() context.Context {
	if p == nil {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(ErrNilPartition)
		return ctx
	}
	return p.ctx
}

// lockOf returns the lock of item, or nil.
func (p *Partition) lockOf(item string) *lock.Mutex {
	if p == nil {
		return nil
	}
	if i, found := slices.BinarySearch(p.items, item); found {
		return p.locks[i]
	}
	return nil
}

// Fence returns the fencing token of item's lock: its node's czxid, which
// grows from one holder of the item to the next. The zero Fence when item
// is not in the Partition, or after Release. No ZooKeeper calls.
func (p *Partition) Fence(item string) recipes.Fence {
	if m := p.lockOf(item); m != nil {
		return m.Fence()
	}
	return recipes.Fence{}
}

// FencedMulti runs ops in one multi together with a version check of
// item's lock node, so that ZooKeeper rejects them (an error wrapping
// recipes.ErrFenced) once this member no longer holds the item. Cost: 1
// multi. An item not in the Partition: ErrNotOwned, nothing sent; after
// Release: lock.ErrNotHeld (recipes.ErrReleased), nothing sent.
func (p *Partition) FencedMulti(ctx context.Context, item string, ops ...any) ([]zk.MultiResponse, error) {
	if p == nil {
		return nil, ErrNilPartition
	}
	if ctx == nil {
		return nil, recipes.ErrNilContext
	}
	m := p.lockOf(item)
	if m == nil {
		return nil, fmt.Errorf("%w: %q", ErrNotOwned, item)
	}
	res, err := m.FencedMulti(ctx, ops...)
	if err != nil {
		return res, fmt.Errorf("partition: %s: %w", item, err)
	}
	return res, nil
}

// Release gives the Partition up: Context is cancelled (cause
// recipes.ErrReleased, unless it was done already) before any lock node is
// deleted, then each item's lock is released (lock.Mutex.Unlock), which
// wakes the member waiting for that item, if any. The member's Partitioner
// then allocates again. Cost: 1 delete per item; a delete whose outcome is
// unknown, or any delete while ctx is done or the connection is suspended,
// goes on in the background while the session lives.
//
// As every recipes.Held: it returns nil only when it ended a live
// Partition (Context not done). When Context was already done it returns
// an error that errors.Is recipes.ErrReleased and the cause (ErrRebalance,
// ErrStopped, recipes.ErrSessionLost, ...), and still deletes the lock
// nodes that may be left under the live session: the usual case after
// ErrRebalance, so check errors.Is(err, recipes.ErrReleased) rather than
// err == nil there. Releasing again sends nothing and returns an error
// wrapping recipes.ErrReleased. Other errors are the server's answers to
// the deletes.
func (p *Partition) Release(ctx context.Context) error {
	if p == nil {
		return ErrNilPartition
	}
	if ctx == nil {
		return recipes.ErrNilContext
	}
	p.mu.Lock()
	if p.released {
		p.mu.Unlock()
		return fmt.Errorf("partition: release: %w", recipes.ErrReleased)
	}
	p.released = true
	p.mu.Unlock()
	p.end(recipes.ErrReleased)
	var errs []error
	if cause := context.Cause(p.ctx); !errors.Is(cause, recipes.ErrReleased) {
		errs = append(errs, fmt.Errorf("partition: release: already ended: %w (%w)", cause, recipes.ErrReleased))
	}
	for i := len(p.locks) - 1; i >= 0; i-- {
		if err := p.locks[i].Unlock(ctx); err != nil && !errors.Is(err, recipes.ErrReleased) {
			errs = append(errs, fmt.Errorf("partition: release %s: %w", p.items[i], err))
		}
	}
	close(p.done)
	return errors.Join(errs...)
}
