// The RWMutex: its type, the holding it keeps for each side, its
// constructor and argument checks, the Spec each side's contender uses,
// and the write side's accessors (Context, Revoked, Fence, Node,
// FencedMulti). Taking and giving back is in acquire.go, the views in
// view.go.

package rwlock

import (
	"context"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/lockopt"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// RWMutex is a distributed shared-read / exclusive-write lock at a
// ZooKeeper path. Every contender creates a protected ephemeral sequential
// node under the path; all nodes share the parent's sequence counter, so
// they form one queue.
//
//   - A reader holds when no writer is ahead of it in the queue; otherwise
//     it watches the nearest writer ahead (never another reader).
//   - A writer holds when it is first in the queue; otherwise it watches
//     the node right ahead of it, reader or writer.
//
// Invariant: while a writer holds, no other RWMutex (in any process, in any
// compatible client) holds the path, for reading or writing, as long as
// holders stop when their side's Context is done; fenced writes are
// rejected by ZooKeeper once the holding is gone. The queue is fair: a
// writer queued before a reader gets the lock before it, so a stream of
// readers cannot starve a writer.
//
// Goroutine safety: an RWMutex stands for one would-be holder and is safe
// for concurrent use (calls are serialised on its own state, and no Go lock
// is held while waiting for other holders); but like lock.Mutex it is not
// reentrant, and only one acquisition may be in progress at a time: a
// second one returns ErrAlreadyHeld. Use one RWMutex value per would-be
// holder.
type RWMutex struct {
	s    *recipes.Session
	path string
	cfg  lockopt.Config

	// op serialises the downgrade (Reader().Lock while writing) with Unlock and
	// Reader().Unlock, so that the write node is never released while a downgraded
	// read node is being created. Never held while waiting for others.
	op sync.Mutex

	mu   sync.Mutex
	busy bool     // an acquisition is in progress
	w    *holding // write holding
	r    *holding // read holding
	// barrier is our write node kept after Unlock while a downgraded read
	// holding needs it (writers were queued between it and our read node);
	// Reader().Unlock deletes it.
	barrier *recipes.Holding
}

// holding is one recipes.Holding with the context this package hands out:
// derived from the node's, so that Unlock can end the user's write holding
// while the node stays as a barrier, and so that a downgraded read holding
// also ends if the write node it relies on is lost.
type holding struct {
	h      *recipes.Holding
	ctx    context.Context // nil until first asked for (see context)
	cancel context.CancelCauseFunc
	untie  func() bool // stops the tie of a downgraded read to the write node
}

// context returns the holding's derived context, creating it on first use
// (which arms the node watch, see recipes.Holding.Context). Call with m.mu.
func (hd *holding) context() context.Context {
	if hd.ctx == nil {
		hd.ctx, hd.cancel = context.WithCancelCause(hd.h.Context())
	}
	return hd.ctx
}

// lost returns the cause with which the holding ended before its owner
// released it (the derived context's, which also ends with the write node
// of a downgrade, or else the node's), or nil while it is live. It arms no
// watch. Call with m.mu.
func (hd *holding) lost() error {
	if hd.ctx != nil && hd.ctx.Err() != nil {
		return context.Cause(hd.ctx)
	}
	return hd.h.Cause()
}

// alreadyLost is the error of releasing a holding (what) that ended, with
// cause, before its owner released it.
func alreadyLost(what string, cause error) error {
	return fmt.Errorf("%s already lost: %w (%w)", what, cause, recipes.ErrReleased)
}

// end cancels the derived context (if any) and unties it.
func (hd *holding) end(cause error) {
	if hd.untie != nil {
		hd.untie()
	}
	if hd.cancel != nil {
		hd.cancel(cause)
	}
}

// New returns an RWMutex on path. It sends nothing. It fails, wrapping a
// sentinel, on a nil session (recipes.ErrNilSession), an invalid path or
// one in the reserved /zookeeper tree (recipes.ErrInvalidPath), data
// (WithData) larger than the session's request limit
// (recipes.ErrDataTooLarge) or a dialect without read and write names
// (lock.ErrDialect and recipes.ErrBadArgument).
func New(s *recipes.Session, path string, opts ...Option) (*RWMutex, error) {
	cfg := config(opts)
	if err := checkArgs(s, path, cfg); err != nil {
		return nil, err
	}
	return &RWMutex{s: s, path: path, cfg: cfg}, nil
}

// Path returns the lock's path, under which readers' and writers' nodes
// are.
func (m *RWMutex) Path() string { return m.path }

func checkArgs(s *recipes.Session, path string, c lockopt.Config) error {
	if s == nil {
		return fmt.Errorf("rwlock: %w", recipes.ErrNilSession)
	}
	if err := recipes.ValidateParentPath(path); err != nil {
		return fmt.Errorf("rwlock: %w", err)
	}
	if err := recipes.CheckData(c.Data, s.MaxData()); err != nil {
		return fmt.Errorf("rwlock: data: %w", err)
	}
	if !c.Dialect.Supports(recipes.RoleRead) || !c.Dialect.Supports(recipes.RoleWrite) {
		return fmt.Errorf("%w (%w): dialect %s has no read/write names", lock.ErrDialect, recipes.ErrBadArgument, c.Dialect)
	}
	return nil
}

// spec returns the contest of one role: readers use recipes.Read(), writers
// recipes.Exclusive(), over the roles the dialect orders against them.
func spec(c lockopt.Config, path string, role recipes.Role, policy recipes.LossPolicy) recipes.Spec {
	p := recipes.Exclusive()
	if role == recipes.RoleRead {
		p = recipes.Read()
	}
	return recipes.Spec{
		Path:      path,
		Dialect:   c.Dialect,
		Role:      role,
		Predicate: p,
		Data:      c.Data,
		Policy:    policy,
		Revocable: c.Revocable,
	}
}

// check reports a nil receiver or a nil ctx.
func (m *RWMutex) check(ctx context.Context) error {
	if m == nil {
		return ErrNilReceiver
	}
	if ctx == nil {
		return recipes.ErrNilContext
	}
	return nil
}

// side says which of an RWMutex's holdings a call is about.
type side bool

const (
	readSide  side = false
	writeSide side = true
)

func (m *RWMutex) get(write side) *holding {
	if m == nil {
		return nil
	}
	if write {
		return m.w
	}
	return m.r
}

func notContext() context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(ErrNotHeld)
	return ctx
}

func (m *RWMutex) holdingCtx(write side) context.Context {
	if m == nil {
		return notContext()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if hd := m.get(write); hd != nil {
		return hd.context()
	}
	return notContext()
}

func (m *RWMutex) recipesHolding(write side) *recipes.Holding {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if hd := m.get(write); hd != nil {
		return hd.h
	}
	return nil
}

// Context returns the write holding's lifetime context: it is cancelled,
// with a cause that errors.Is recipes.ErrSuspended (default loss policy;
// also recipes.ErrLeaseExpired), recipes.ErrSessionLost,
// recipes.ErrNodeDeleted, recipes.ErrRevoked or recipes.ErrReleased, the
// moment the write holding may be lost (see recipes.Held). Without a write
// holding it returns a context already cancelled with ErrNotHeld. The first
// call per holding arms a data watch on our node (1 getData, in the
// background) unless one is set.
func (m *RWMutex) Context() context.Context { return m.holdingCtx(writeSide) }

// Revoked returns a channel closed when another process asked the write
// holder to release (see Revoke). Only watched with WithRevocation; nil
// (never ready) without a write holding.
func (m *RWMutex) Revoked() <-chan struct{} { return m.Writer().Revoked() }

// Fence returns the write holding's fencing token (the zero Fence without
// one); see View.Fence.
func (m *RWMutex) Fence() recipes.Fence { return m.Writer().Fence() }

// Node returns the full path of our write node while holding the write
// lock, else "".
func (m *RWMutex) Node() string { return m.Writer().Node() }

// FencedMulti runs ops in one multi together with a version check of our
// write node, so ZooKeeper rejects them (error wrapping recipes.ErrFenced)
// once the write holding is gone. Cost: 1 multi. Without a write holding
// it returns ErrNotHeld.
func (m *RWMutex) FencedMulti(ctx context.Context, ops ...any) ([]zk.MultiResponse, error) {
	return m.Writer().FencedMulti(ctx, ops...)
}

func (m *RWMutex) fencedMulti(ctx context.Context, write side, ops []any) ([]zk.MultiResponse, error) {
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	h := m.recipesHolding(write)
	if h == nil {
		return nil, ErrNotHeld
	}
	res, err := recipes.FencedMulti(ctx, m.s, h.Fence(), ops...)
	if err != nil {
		return res, fmt.Errorf("rwlock: %w", err)
	}
	return res, nil
}
