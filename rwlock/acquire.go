// Taking and giving back an RWMutex: the write side (Lock, TryLock), the
// read side (taken through a Reader view), the downgrade of a write
// holding to a read one, and Unlock, which first checks that no writer
// queued between a downgrade's write and read nodes.

package rwlock

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkrecipes/zkrecipes/internal/seq"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// whenBusy says what taking a side does when it cannot be had at once.
type whenBusy bool

const (
	waitTurn whenBusy = false // wait for it (Lock)
	tryOnce  whenBusy = true  // fail with ErrNotAcquired (TryLock)
)

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
	return m.lockWrite(ctx, waitTurn)
}

// TryLock takes the write lock only if nobody holds or waits for the path.
// It returns ErrLocked when someone does, and then writes nothing (cost: 1
// getChildren). Uncontended cost: 1 getChildren + 1 create + 1
// getChildren + 1 getData (as for Lock); if a contender slipped in between, our node is deleted and
// the result is ErrLocked. Misuse is reported as for Lock.
func (m *RWMutex) TryLock(ctx context.Context) error {
	return m.lockWrite(ctx, tryOnce)
}

func (m *RWMutex) lockWrite(ctx context.Context, try whenBusy) error {
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

func (m *RWMutex) acquire(ctx context.Context, role recipes.Role, try whenBusy) (*recipes.Holding, error) {
	sp := spec(m.cfg, m.path, role, m.cfg.LossPolicy(m.s))
	if try {
		return recipes.TryAcquire(ctx, m.s, sp)
	}
	return recipes.Acquire(ctx, m.s, sp)
}

func (m *RWMutex) wrapAcquireErr(err error, try whenBusy, op string) error {
	switch {
	case err == nil:
		return nil
	case try == tryOnce && errors.Is(err, recipes.ErrWouldBlock):
		return fmt.Errorf("rwlock: %w: %s", ErrLocked, m.path)
	case try == tryOnce:
		return fmt.Errorf("rwlock: try%s %s: %w", op, m.path, err)
	}
	return fmt.Errorf("rwlock: %s %s: %w", op, m.path, err)
}

func (m *RWMutex) lockRead(ctx context.Context, try whenBusy) error {
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
// After a downgrade (Reader().Lock while writing), Unlock keeps the read holding.
// It first lists the path (1 getChildren): if no writer is queued between
// our write node and our read node, the write node is deleted and readers
// queued behind it join us. Otherwise the write node is kept (sends no
// delete) until Reader().Unlock: deleting it would let the writer queued right
// behind it hold while we still read (which Curator's downgrade allows: its
// read node is queued after that writer, which only watches our write
// node).
// Readers queued behind it then wait for our Reader().Unlock too.
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
