package lock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// MultiMutex holds several locks all or nothing: Curator's
// InterProcessMultiLock over InterProcessMutexes, for work that needs
// several resources at once (Vitess-style "lock these keyspaces"). It is
// built from one Mutex per path (NewMulti makes them with its options), so
// a Mutex (or Curator's InterProcessMutex) on any one of the paths excludes
// and is excluded the usual way; what it adds is the order, all or
// nothing, and one loss signal.
//
// Invariants:
//   - Deadlock freedom: every MultiMutex takes its paths in one global
//     order (sorted byte-wise, duplicates removed), so two MultiMutexes
//     never wait for each other in a cycle. Curator's InterProcessMultiLock
//     takes them in the order given: give it the same sorted order to mix
//     the two.
//   - All or nothing: Lock returns nil only once every path is held and
//     the session was not lost or suspended on the way, and no holding was
//     lost by then (checked synchronously: Context is not done when Lock
//     returns nil); on any failure it releases what it took and holds
//     nothing.
//   - One loss signal: Context is done as soon as any of the holdings may
//     be lost (its cause is that holding's), in the same step: it is
//     cancelled inside that holding's own cancellation, never later. The
//     other holdings stay held until Unlock, so nobody else acquires any
//     path before the holder has been told.
//
// Cost: Lock is a Mutex Lock per path, in order (uncontended: 1 create + 1
// getChildren each; the first Context call 1 getData per path more);
// TryLock a TryLock per path (and 1 delete per path
// taken when one is busy); Unlock 1 delete per path; FencedMulti 1 multi.
//
// A MultiMutex is safe for concurrent use; like a Mutex it holds at most
// once at a time (not reentrant).
type MultiMutex struct {
	s     *recipes.Session
	locks []*Mutex // one Mutex per path, in the order they are taken

	mu   sync.Mutex
	busy bool
	held *multiHolding
}

type multiHolding struct {
	hs     []*recipes.Holding
	ctx    context.Context
	cancel context.CancelCauseFunc
	stops  []func() // untie ctx from the holdings (set before mh is shared)

	arm sync.Once // arms the holdings' watches, on first use
}

// newMultiHolding ties the joint context to every holding: the loss of one
// cancels it, with that holding's cause, inside the holding's own
// cancellation (recipes.Holding.OnLoss), so the joint context is never live while a
// part is done. A part already lost cancels it at once. No ZooKeeper
// calls.
func newMultiHolding(hs []*recipes.Holding) *multiHolding {
	mh := &multiHolding{hs: hs}
	mh.ctx, mh.cancel = context.WithCancelCause(context.Background())
	for _, h := range hs {
		mh.stops = append(mh.stops, h.OnLoss(mh.cancel))
	}
	return mh
}

// context returns the joint context, arming on first use a data watch on
// every holding's node (each holding's first Context call: 1 getData each,
// in the background, as Mutex.Context's first call costs), so that a node
// deleted or revoked by someone else ends it too.
func (mh *multiHolding) context() context.Context {
	mh.arm.Do(func() {
		if mh.ctx.Err() != nil {
			return // ended already: nothing to watch
		}
		for _, h := range mh.hs {
			h.Context()
		}
	})
	return mh.ctx
}

// end cancels the joint context and unties it from the holdings.
func (mh *multiHolding) end(cause error) {
	mh.cancel(cause)
	for _, stop := range mh.stops {
		stop()
	}
}

// NewMulti returns a multi-lock over paths, with the options of New (each
// path's Mutex has them). Nothing is sent to ZooKeeper. It fails, wrapping a
// sentinel, on a nil session (recipes.ErrNilSession), no path
// (recipes.ErrBadArgument), or any path or option New would refuse.
func NewMulti(s *recipes.Session, paths []string, opts ...Option) (*MultiMutex, error) {
	if len(paths) == 0 {
		if s == nil {
			return nil, fmt.Errorf("lock: %w", recipes.ErrNilSession)
		}
		return nil, fmt.Errorf("lock: %w: a multi-lock needs at least 1 path", recipes.ErrBadArgument)
	}
	sorted := slices.Clone(paths)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	m := &MultiMutex{s: s}
	for _, p := range sorted {
		mx, err := New(s, p, opts...)
		if err != nil {
			return nil, err
		}
		m.locks = append(m.locks, mx)
	}
	return m, nil
}

// Paths returns the lock paths in the order they are taken.
func (m *MultiMutex) Paths() []string {
	out := make([]string, len(m.locks))
	for i, mx := range m.locks {
		out[i] = mx.Path()
	}
	return out
}

func (m *MultiMutex) begin() error {
	if m == nil {
		return ErrNilReceiver
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.busy || m.held != nil {
		return ErrAlreadyHeld
	}
	m.busy = true
	return nil
}

// Lock takes every path in order, waiting for each, and returns nil once
// it holds them all. When ctx ends or a holding is lost before that, it
// releases what it took and returns the cause. Costs: see MultiMutex.
func (m *MultiMutex) Lock(ctx context.Context) error {
	return m.acquire(ctx, (*Mutex).Lock)
}

// TryLock takes every path without waiting: when one is held or contended
// it releases what it took and returns an error wrapping ErrLocked.
func (m *MultiMutex) TryLock(ctx context.Context) error {
	return m.acquire(ctx, (*Mutex).TryLock)
}

// acquire takes every path with take (Mutex.Lock or Mutex.TryLock), in
// order; on any failure it unlocks what it took, last first.
func (m *MultiMutex) acquire(ctx context.Context, take func(*Mutex, context.Context) error) error {
	if m != nil && ctx == nil {
		return recipes.ErrNilContext
	}
	if err := m.begin(); err != nil {
		return err
	}
	var taken []*Mutex
	fail := func(err error) error {
		unlockAll(context.WithoutCancel(ctx), taken)
		m.mu.Lock()
		m.busy = false
		m.mu.Unlock()
		return err
	}
	var hs []*recipes.Holding
	for _, mx := range m.locks {
		err := take(mx, ctx)
		if h := mx.holding(); h != nil {
			taken = append(taken, mx) // held, even if take failed after acquiring
			hs = append(hs, h)
		}
		if err != nil {
			return fail(fmt.Errorf("lock: multi-lock: %w", err))
		}
	}
	// All or nothing: a session lost or suspended while later paths were
	// awaited voids the whole acquisition. (This check sends nothing; a
	// node deleted by someone else shows in Context, whose first call
	// reads every node.)
	if st := m.s.State(); st != recipes.StateConnected && st != recipes.StateReconnected {
		return fail(fmt.Errorf("lock: multi-lock: session %v while acquiring: %w", st, recipes.ErrSuspended))
	}
	for _, h := range hs {
		if sid := m.s.ID(); h.Fence().SessionID != sid {
			return fail(fmt.Errorf("lock: multi-lock %s lost while acquiring: %w", h.Path(), recipes.ErrSessionLost))
		}
	}
	// A holding lost while later paths were awaited (suspended under
	// StepDownOnSuspend, even if the same session came back since; node
	// deleted; lease expired) voids the acquisition too: each part's state
	// is read here, synchronously, after the joint context was tied to it,
	// so no loss falls between the check and the tie.
	mh := newMultiHolding(hs)
	for _, h := range hs {
		if err := h.Cause(); err != nil {
			mh.end(err)
			return fail(fmt.Errorf("lock: multi-lock %s lost while acquiring: %w", h.Path(), err))
		}
	}
	m.mu.Lock()
	m.busy = false
	m.held = mh
	m.mu.Unlock()
	return nil
}

// unlockAll unlocks ms in reverse order; each Unlock cancels its holding
// before deleting its node.
func unlockAll(ctx context.Context, ms []*Mutex) error {
	var errs []error
	for i := len(ms) - 1; i >= 0; i-- {
		if err := ms[i].Unlock(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Unlock releases every path, last taken first: Context is cancelled
// (recipes.ErrReleased) before any node is deleted. Unlock on a
// MultiMutex that holds nothing returns an error wrapping ErrNotHeld and
// recipes.ErrReleased, and sends nothing.
func (m *MultiMutex) Unlock(ctx context.Context) error {
	if m == nil {
		return ErrNilReceiver
	}
	if ctx == nil {
		return recipes.ErrNilContext
	}
	m.mu.Lock()
	mh := m.held
	m.held = nil
	m.mu.Unlock()
	if mh == nil {
		return ErrNotHeld // errors.Is recipes.ErrReleased too
	}
	mh.end(recipes.ErrReleased)
	if err := unlockAll(ctx, m.locks); err != nil {
		return fmt.Errorf("lock: multi-unlock: %w", err)
	}
	return nil
}

func (m *MultiMutex) holding() *multiHolding {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.held
}

// Context is done the moment any of the holdings may be lost, with that
// holding's cause (see recipes.Held), or once released; when nothing is
// held it is already done (ErrNotHeld). The first call after Lock arms a
// data watch on every held node (1 getData per path, in the background),
// so that a node deleted or revoked by someone else ends it too.
func (m *MultiMutex) Context() context.Context {
	if mh := m.holding(); mh != nil {
		return mh.context()
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(ErrNotHeld)
	return ctx
}

// Fences returns the fence of each holding, in the order of Paths; nil
// when nothing is held.
func (m *MultiMutex) Fences() []recipes.Fence {
	mh := m.holding()
	if mh == nil {
		return nil
	}
	fs := make([]recipes.Fence, len(mh.hs))
	for i, h := range mh.hs {
		fs[i] = h.Fence()
	}
	return fs
}

// FencedMulti runs ops in one multi after a version check of every held
// node (the joint fence), so ZooKeeper rejects the whole transaction (an
// error wrapping recipes.ErrFenced) once any holding is gone or revoked.
// The responses returned are those of ops. Cost: 1 multi. Without a
// holding: ErrNotHeld, nothing sent.
func (m *MultiMutex) FencedMulti(ctx context.Context, ops ...any) ([]zk.MultiResponse, error) {
	if m == nil {
		return nil, ErrNilReceiver
	}
	if ctx == nil {
		return nil, recipes.ErrNilContext
	}
	mh := m.holding()
	if mh == nil {
		return nil, ErrNotHeld
	}
	checks := make([]any, 0, len(mh.hs)-1+len(ops))
	for _, h := range mh.hs[1:] {
		checks = append(checks, h.Fence().Check())
	}
	n := len(checks)
	res, err := recipes.FencedMulti(ctx, m.s, mh.hs[0].Fence(), append(checks, ops...)...)
	for i := 0; i < n && i < len(res); i++ {
		if res[i].Error != nil {
			return nil, fmt.Errorf("lock: %w: %s: %w", recipes.ErrFenced, mh.hs[i+1].Path(), res[i].Error)
		}
	}
	if len(res) >= n {
		res = res[n:]
	}
	if err != nil {
		return res, fmt.Errorf("lock: %w", err)
	}
	return res, nil
}
