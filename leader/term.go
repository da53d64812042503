package leader

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Term is one period of leadership, from Campaign's return until its
// context is done.
//
// Invariant: while Context() is not done, our node was first in line, and
// existed with our current session as its ephemeral owner when checked; the
// session has not been lost, our node has not been deleted or written by
// anyone else, and (default loss policy) the connection has not been
// suspended since. Context() is cancelled the moment any of that may have
// changed, with a cause that errors.Is recipes.ErrSuspended,
// recipes.ErrSessionLost (recipes.ErrClosed also matches it),
// recipes.ErrNodeDeleted, recipes.ErrRevoked or, after Release,
// recipes.ErrReleased. A Term is a recipes.Held.
//
// When a term ends by loss, our node is deleted automatically (right away,
// or by the session's background retries once it reconnects; a lost session
// takes it along), so a participant that lost leadership never blocks the
// line. Campaign again to rejoin, at the back.
//
// A Term is safe for concurrent use.
type Term struct {
	e   *Election
	h   *recipes.Holding
	ctx context.Context

	stopping sync.Once // StopStart/StopComplete are emitted once

	mu       sync.Mutex
	resigned bool
}

var _ recipes.Held = (*Term)(nil)

// newTerm starts the term: ElectedComplete is emitted before anything can
// emit the term's Stop events.
func newTerm(e *Election, h *recipes.Holding) *Term {
	t := &Term{e: e, h: h, ctx: h.Context()}
	e.emit(Event{Type: EventElectedComplete, Node: h.Path()})
	context.AfterFunc(t.ctx, t.lost)
	return t
}

// lost runs once the term's context is done. Unless Release is handling it,
// it gives our node up: the delete goes to the session's background
// (guaranteed delete while the session lives).
func (t *Term) lost() {
	cause := context.Cause(t.ctx)
	if errors.Is(cause, recipes.ErrReleased) {
		return // Release handles it
	}
	t.stopping.Do(func() {
		t.e.emit(Event{Type: EventStopStart, Node: t.h.Path(), Err: cause})
		done, cancel := context.WithCancel(context.Background())
		cancel()
		_ = t.h.Release(done) // ctx done: nothing sent here, background delete
		t.e.emit(Event{Type: EventStopComplete, Node: t.h.Path()})
	})
}

// Context returns the term's lifetime context; see the type's invariant.
// Its Done channel closes when the term ends, and context.Cause says why.
// On a nil Term it returns a context already cancelled with ErrNilReceiver.
func (t *Term) Context() context.Context {
	if t == nil {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(ErrNilReceiver)
		return ctx
	}
	return t.ctx
}

// Fence returns the term's fencing token: our node's czxid (with its path,
// session and version). Tokens strictly grow across successive terms of one
// election, whoever leads: each leader's node was created after the
// previous leader's. The zero Fence for a nil Term.
func (t *Term) Fence() recipes.Fence {
	if t == nil {
		return recipes.Fence{}
	}
	return t.h.Fence()
}

// Participant describes us as leader (the zero Participant for a nil Term).
func (t *Term) Participant() Participant {
	if t == nil {
		return Participant{}
	}
	f := t.h.Fence()
	return Participant{ID: string(t.e.cfg.data), Node: f.Path, SessionID: f.SessionID, Token: f.Token}
}

// FencedMulti runs ops in one multi together with a version check of our
// node, so ZooKeeper rejects them (error wrapping recipes.ErrFenced) once the
// term's node is gone, even if this process has not noticed yet. Cost: 1
// multi.
func (t *Term) FencedMulti(ctx context.Context, ops ...any) ([]zk.MultiResponse, error) {
	if t == nil {
		return nil, ErrNilReceiver
	}
	if ctx == nil {
		return nil, recipes.ErrNilContext
	}
	res, err := recipes.FencedMulti(ctx, t.e.s, t.h.Fence(), ops...)
	if err != nil {
		return res, fmt.Errorf("leader: %w", err)
	}
	return res, nil
}

// Release resigns: it ends the term, whose context is cancelled (cause
// recipes.ErrReleased) before our node is deleted, so we stop leading
// before anyone else can start. Cost: 1 delete, which wakes exactly one
// participant, the one behind us (plus, once per session, the Observes of
// this path, and our own term's node watch, which ends with it). If the
// delete's outcome is ambiguous, or ctx is already done, it continues in
// the background while the session lives.
//
// It returns nil when it ended a live term; otherwise, as every Release
// does (see recipes.Held), an error that errors.Is recipes.ErrReleased:
// ErrResigned when the term was released before; after the term ended by
// loss, an error that also wraps the loss's cause. Neither sends anything:
// a term that ended by loss has already given its node up. A nil Term
// returns ErrNilReceiver.
func (t *Term) Release(ctx context.Context) error {
	if t == nil {
		return ErrNilReceiver
	}
	if ctx == nil {
		return recipes.ErrNilContext
	}
	t.mu.Lock()
	if t.resigned {
		t.mu.Unlock()
		return ErrResigned
	}
	t.resigned = true
	t.mu.Unlock()
	var err error
	stopped := false
	t.stopping.Do(func() {
		stopped = true
		// Err is set if the term ended by loss a moment ago and lost has
		// not run yet: this Release gives the node up in its place.
		t.e.emit(Event{Type: EventStopStart, Node: t.h.Path(), Err: context.Cause(t.ctx)})
		err = t.h.Release(ctx)
		t.e.emit(Event{Type: EventStopComplete, Node: t.h.Path()})
	})
	if !stopped {
		// The term ended by loss, and lost gave its node up.
		err = fmt.Errorf("already lost: %w (%w)", context.Cause(t.ctx), recipes.ErrReleased)
	}
	if err != nil {
		return fmt.Errorf("leader: resign %s: %w", t.h.Path(), err)
	}
	return nil
}
