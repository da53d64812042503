package rwlock

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/lockopt"
	"github.com/zkrecipes/zkrecipes/internal/seq"
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
// holders stop when their context (Context, RContext) is done; fenced writes are
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

	// op serialises the downgrade (RLock while writing) with Unlock and
	// RUnlock, so that the write node is never released while a downgraded
	// read node is being created. Never held while waiting for others.
	op sync.Mutex

	mu   sync.Mutex
	busy bool     // an acquisition is in progress
	w    *holding // write holding
	r    *holding // read holding
	// barrier is our write node kept after Unlock while a downgraded read
	// holding needs it (writers were queued between it and our read node);
	// RUnlock deletes it.
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

// Lock waits until this RWMutex holds the write lock or ctx is done. If ctx
// ends first, our node is deleted before Lock returns and the error is
// ctx's error; with an already-done ctx nothing is sent. Lock while holding
// only the read lock returns ErrUpgrade; while holding the write lock,
// ErrAlreadyHeld.
//
// Cost: uncontended 1 create + 1 getChildren + 1 getData on our own node
// (its czxid; see the package doc for when it is skipped). Contended: 1
// getData to watch the node right ahead. When it goes and nodes of our
// listing remain ahead, 1 getData watches the next one (1 getChildren
// instead when more than two remain). When none remains, in the Curator
// dialect 1 getChildren confirms that we are first before we hold: a
// Curator 5.5+ writer downgrades by creating a read node without a
// sequence of its own where its write node was, ahead of us, and then
// deleting the write node we were watching; only a listing shows it. In
// the kazoo dialect every node is sequential and we hold without listing.
// If the session is lost while waiting, Lock starts over under the new
// session. Lock never returns nil with Context() already done (see
// recipes.Acquire).
func (m *RWMutex) Lock(ctx context.Context) error {
	return m.lockWrite(ctx, false)
}

// TryLock takes the write lock only if nobody holds or waits for the path.
// It returns ErrLocked when someone does, and then writes nothing (cost: 1
// getChildren). Uncontended cost: 1 getChildren + 1 create + 1
// getChildren + 1 getData (as for Lock); if a contender slipped in between, our node is deleted and
// the result is ErrLocked. Misuse is reported as for Lock.
func (m *RWMutex) TryLock(ctx context.Context) error {
	return m.lockWrite(ctx, true)
}

func (m *RWMutex) lockWrite(ctx context.Context, try bool) error {
	if err := m.check(ctx); err != nil {
		return err
	}
	m.mu.Lock()
	switch {
	case m.busy, m.w != nil:
		m.mu.Unlock()
		return ErrAlreadyHeld
	case m.r != nil:
		m.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrUpgrade, m.path)
	}
	m.busy = true
	m.mu.Unlock()

	h, err := m.acquire(ctx, recipes.RoleWrite, try)
	m.mu.Lock()
	m.busy = false
	if h != nil {
		m.w = &holding{h: h}
	}
	m.mu.Unlock()
	return m.wrapAcquireErr(err, try, "lock")
}

func (m *RWMutex) acquire(ctx context.Context, role recipes.Role, try bool) (*recipes.Holding, error) {
	sp := spec(m.cfg, m.path, role, m.cfg.LossPolicy(m.s))
	if try {
		return recipes.TryAcquire(ctx, m.s, sp)
	}
	return recipes.Acquire(ctx, m.s, sp)
}

func (m *RWMutex) wrapAcquireErr(err error, try bool, op string) error {
	switch {
	case err == nil:
		return nil
	case try && errors.Is(err, recipes.ErrWouldBlock):
		return fmt.Errorf("rwlock: %w: %s", ErrLocked, m.path)
	case try:
		return fmt.Errorf("rwlock: try%s %s: %w", op, m.path, err)
	}
	return fmt.Errorf("rwlock: %s %s: %w", op, m.path, err)
}

func (m *RWMutex) lockRead(ctx context.Context, try bool) error {
	if err := m.check(ctx); err != nil {
		return err
	}
	m.op.Lock()
	m.mu.Lock()
	if m.busy || m.r != nil {
		m.mu.Unlock()
		m.op.Unlock()
		return ErrAlreadyHeld
	}
	m.busy = true
	w := m.w
	m.mu.Unlock()

	if w != nil {
		defer m.op.Unlock()
		r, err := m.downgrade(ctx, w)
		m.mu.Lock()
		m.busy = false
		m.r = r
		m.mu.Unlock()
		if err != nil {
			return fmt.Errorf("rwlock: rlock %s (downgrade): %w", m.path, err)
		}
		return nil
	}
	m.op.Unlock()
	h, err := m.acquire(ctx, recipes.RoleRead, try)
	m.mu.Lock()
	m.busy = false
	if h != nil {
		m.r = &holding{h: h}
	}
	m.mu.Unlock()
	return m.wrapAcquireErr(err, try, "rlock")
}

// downgrade creates our read node while we hold the write lock, without
// ordering: the write holding excludes every other holder, and our read
// node then counts as held. Its context is tied to the write node's: if the
// write node is lost other than by our own Unlock, writers queued behind it
// may hold, so the read holding ends too. Called with m.op held.
func (m *RWMutex) downgrade(ctx context.Context, w *holding) (*holding, error) {
	wctx := w.h.Context()
	if wctx.Err() != nil {
		// Our write node may be gone and a writer behind it holding: a
		// read node created now would not be guarded. Nothing is sent.
		return nil, fmt.Errorf("write holding lost: %w", context.Cause(wctx))
	}
	sp := spec(m.cfg, m.path, recipes.RoleRead, m.cfg.LossPolicy(m.s))
	h, err := recipes.Enter(ctx, m.s, sp)
	if err != nil {
		return nil, err
	}
	if h.SessionID() != w.h.SessionID() {
		// The session changed while creating: the write node is gone.
		_ = h.Release(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("%w: write holding of session 0x%x, read node of 0x%x",
			recipes.ErrSessionLost, w.h.SessionID(), h.SessionID())
	}
	r := &holding{h: h}
	r.context()
	r.untie = context.AfterFunc(wctx, func() {
		if cause := context.Cause(wctx); !errors.Is(cause, recipes.ErrReleased) {
			r.cancel(cause)
		}
	})
	if wctx.Err() != nil {
		// The write holding ended while our read node was created (m.op
		// excludes our own Unlock): the read node was never guarded, and
		// a read holding born cancelled is no success.
		r.end(context.Cause(wctx))
		_ = h.Release(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("write holding lost: %w", context.Cause(wctx))
	}
	return r, nil
}

// Unlock releases the write lock: Context() is cancelled (cause
// recipes.ErrReleased), then our write node is deleted. Cost: 1 delete
// (retried in the background if ambiguous or if ctx is done). It wakes the
// one writer queued right behind us, or else every reader queued between us
// and the next writer (all of which then hold).
//
// It returns nil when it released a live write holding; otherwise, as
// every Release does (see recipes.Held), an error that errors.Is
// recipes.ErrReleased: ErrNotHeld without the write holding (nothing is
// sent); after the write holding was lost (Context() done), an error that
// also wraps the loss's cause, the holding being given up all the same
// (the delete is sent only while our node may still be there).
//
// After a downgrade (RLock while writing), Unlock keeps the read holding.
// It first lists the path (1 getChildren): if no writer is queued between
// our write node and our read node, the write node is deleted and readers
// queued behind it join us. Otherwise the write node is kept (sends no
// delete) until RUnlock: deleting it would let the writer queued right
// behind it hold while we still read (which Curator's downgrade allows: its
// read node is queued after that writer, which only watches our write
// node).
// Readers queued behind it then wait for our RUnlock too.
func (m *RWMutex) Unlock(ctx context.Context) error {
	if err := m.check(ctx); err != nil {
		return err
	}
	m.op.Lock()
	defer m.op.Unlock()
	m.mu.Lock()
	w, r := m.w, m.r
	m.w = nil
	var cause error
	if w != nil {
		cause = w.lost()
		w.end(recipes.ErrReleased)
	}
	m.mu.Unlock()
	if w == nil {
		return ErrNotHeld
	}
	var err error
	if r != nil && m.writerQueuedBetween(ctx, w.h, r.h) {
		m.mu.Lock()
		m.barrier = w.h
		m.mu.Unlock()
		if cause != nil {
			err = alreadyLost("write holding", cause)
		}
	} else {
		// Its error says "already lost" when cause is set: the write
		// holding's context ends only with its node's.
		err = w.h.Release(ctx)
	}
	if err != nil {
		return fmt.Errorf("rwlock: unlock %s: %w", m.path, err)
	}
	return nil
}

// writerQueuedBetween reports whether a writer's node lies between our
// write node and our (later) read node. Nodes are never added there (a new
// node always gets a later sequence), so the answer can only turn from
// true to false. Any doubt (an error, a lost session) answers true.
func (m *RWMutex) writerQueuedBetween(ctx context.Context, w, r *recipes.Holding) bool {
	d := m.cfg.Dialect
	wc, ok1 := d.Parse(w.Name(), recipes.RoleWrite)
	rc, ok2 := d.Parse(r.Name(), recipes.RoleRead)
	if !ok1 || !ok2 {
		return true
	}
	cs, err := recipes.Contenders(ctx, m.s, d, m.path, d.Blocking(recipes.RoleRead)...)
	if err != nil {
		m.s.Logger().Info("rwlock: downgrade keeps the write node", "path", m.path, "err", err)
		return true
	}
	return writerBetween(cs, wc.Seq, rc.Seq)
}

// writerBetween reports whether cs holds a writer (any role but RoleRead)
// whose sequence lies strictly between from and to in serial order. Pure.
func writerBetween(cs []recipes.Contender, from, to int32) bool {
	for _, c := range cs {
		if c.Role != recipes.RoleRead && seq.Less(from, c.Seq) && seq.Less(c.Seq, to) {
			return true
		}
	}
	return false
}

func (m *RWMutex) unlockRead(ctx context.Context) error {
	if err := m.check(ctx); err != nil {
		return err
	}
	m.op.Lock()
	defer m.op.Unlock()
	m.mu.Lock()
	r, b := m.r, m.barrier
	m.r, m.barrier = nil, nil
	var cause error
	if r != nil {
		cause = r.lost()
		r.end(recipes.ErrReleased)
	}
	m.mu.Unlock()
	if r == nil {
		return ErrNotHeld
	}
	err := r.h.Release(ctx)
	if cause != nil && !errors.Is(err, recipes.ErrReleased) {
		// Ended by the loss of the write node it relied on: the read
		// node itself was live.
		err = errors.Join(alreadyLost("read holding", cause), err)
	}
	if b != nil {
		// The kept write node's loss, if any, ended the read holding too,
		// and cause says so already.
		if berr := b.Release(ctx); !errors.Is(berr, recipes.ErrReleased) {
			err = errors.Join(err, berr)
		}
	}
	if err != nil {
		return fmt.Errorf("rwlock: runlock %s: %w", m.path, err)
	}
	return nil
}

func (m *RWMutex) get(write bool) *holding {
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

func (m *RWMutex) holdingCtx(write bool) context.Context {
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

func (m *RWMutex) recipesHolding(write bool) *recipes.Holding {
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
func (m *RWMutex) Context() context.Context { return m.holdingCtx(true) }

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

func (m *RWMutex) fencedMulti(ctx context.Context, write bool, ops []any) ([]zk.MultiResponse, error) {
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
