package recipes

import (
	"context"
	"fmt"
	"sync"
)

// Loss hooks let a holding made of several holdings (lock.MultiMutex) end
// its own context in the same step as the part that was lost: the hook
// runs inside the part's cancellation, on the goroutine that cancels it,
// before that cancellation returns; a context.AfterFunc callback would run
// later, on a goroutine of its own, leaving a moment in which the part is
// done and the whole still looks live.

// OnLoss registers f to be called with the cause when h's Context is
// cancelled: synchronously, inside that cancellation and before it
// returns, so that whatever f cancels ends in the same step as h (a
// context.AfterFunc callback would run later, on a goroutine of its own).
// If h has already ended, f runs at once, before OnLoss returns. f runs
// at most once and must not block (cancelling a context is the intended
// use). stop removes f. Nothing happens for a nil h or f. Cost: no
// ZooKeeper calls, and Context's watch is not armed.
func (h *Holding) OnLoss(f func(cause error)) (stop func()) {
	if h == nil || f == nil {
		return func() {}
	}
	return h.loss.add(f, func() error { return context.Cause(h.ctx) })
}

// Cause is Err without arming the watch on h's node that Err arms on its
// first call: for a recipe that checks a holding of its own during an
// acquisition, where that getData would be a request its Cost lines do
// not count. Cost: no ZooKeeper calls. Errors: nil while h is held, else
// the cause of its end; ErrBadArgument for a nil h.
func (h *Holding) Cause() error {
	if h == nil {
		return fmt.Errorf("%w: nil holding", ErrBadArgument)
	}
	return context.Cause(h.ctx)
}

// lossHooks are the functions to call when a holding's Context is
// cancelled. Guarded by mu; each runs once.
type lossHooks struct {
	mu   sync.Mutex
	done bool
	fns  map[uint64]func(error)
	next uint64
}

// lifetime returns the holding's lifetime context and its cancel, which
// also runs the loss hooks, synchronously, once, with the context's cause
// (the first cause wins).
func (h *Holding) lifetime() (context.Context, context.CancelCauseFunc) {
	ctx, cancel := context.WithCancelCause(context.Background())
	return ctx, func(cause error) {
		cancel(cause)
		h.loss.fire(context.Cause(ctx))
	}
}

// add registers f, or calls it at once when the holding has already ended
// (cause reads the context's cause then: a cancel in progress may not have
// reached fire yet). f must not block. The returned stop removes f.
func (l *lossHooks) add(f func(error), cause func() error) (stop func()) {
	l.mu.Lock()
	if err := cause(); l.done || err != nil {
		l.mu.Unlock()
		f(err)
		return func() {}
	}
	if l.fns == nil {
		l.fns = make(map[uint64]func(error))
	}
	k := l.next
	l.next++
	l.fns[k] = f
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		delete(l.fns, k)
		l.mu.Unlock()
	}
}

// fire runs every hook once, without the lock held.
func (l *lossHooks) fire(cause error) {
	l.mu.Lock()
	if l.done {
		l.mu.Unlock()
		return
	}
	l.done = true
	fns := l.fns
	l.fns = nil
	l.mu.Unlock()
	for _, f := range fns {
		f(cause)
	}
}
