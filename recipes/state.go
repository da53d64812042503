package recipes

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// State is a Session's connection state, modelled on Curator's.
type State int

// Session states.
const (
	// StateConnecting: no session established yet.
	StateConnecting State = iota
	// StateConnected: a session is established (the first one, or a new
	// one after StateLost).
	StateConnected
	// StateSuspended: the connection was lost; the session may still live
	// and come back as StateReconnected, or turn out lost.
	StateSuspended
	// StateReconnected: connected again under the same session id; holdings
	// acquired under that id are still backed by their nodes (but those
	// cancelled meanwhile stay cancelled). It also follows a StateLost that
	// the lease reported, when the session turns out to be alive.
	StateReconnected
	// StateLost: the session expired or was replaced by a new session id,
	// or nothing sent for a whole negotiated timeout was answered, so the
	// server may have expired it (the Session's lease; StateReconnected
	// follows if it had not). Treat every ephemeral node of that session
	// as gone.
	StateLost
	// StateClosed: Close was called. Terminal.
	StateClosed
)

func (s State) String() string {
	switch s {
	case StateConnecting:
		return "connecting"
	case StateConnected:
		return "connected"
	case StateSuspended:
		return "suspended"
	case StateReconnected:
		return "reconnected"
	case StateLost:
		return "lost"
	case StateClosed:
		return "closed"
	}
	return fmt.Sprintf("state(%d)", int(s))
}

// usable reports whether requests can be expected to reach a server.
func (s State) usable() bool { return s == StateConnected || s == StateReconnected }

// StateChange is one transition of a Session.
type StateChange struct {
	State State
	// SessionID is the session the change is about: the new id for
	// Connected / Reconnected, the lost id for Lost, the current one
	// otherwise (0 when there is none).
	SessionID int64
	At        time.Time
}

// Subscription delivers a Session's state changes in order, without ever
// blocking the connection: changes are queued (they are rare) until read
// with Next. The first change delivered is the state at Subscribe time.
// Next and Close may be called from different goroutines; Next itself is
// meant for one reader.
type Subscription struct {
	s      *Session
	mu     sync.Mutex
	queue  []StateChange
	notify chan struct{} // capacity 1: "queue not empty or closed"
	done   bool
	err    error // returned by Next once the queue is drained after done
}

func newSubscription(s *Session) *Subscription {
	return &Subscription{s: s, notify: make(chan struct{}, 1)}
}

// push queues a change; called with the session's lock held, never blocks.
func (sub *Subscription) push(c StateChange) {
	sub.mu.Lock()
	if !sub.done {
		sub.queue = append(sub.queue, c)
	}
	sub.mu.Unlock()
	sub.wake()
}

func (sub *Subscription) wake() {
	select {
	case sub.notify <- struct{}{}:
	default:
	}
}

// finish marks the end of the stream: Next returns err once the queue is
// drained.
func (sub *Subscription) finish(err error) {
	sub.mu.Lock()
	if !sub.done {
		sub.done, sub.err = true, err
	}
	sub.mu.Unlock()
	sub.wake()
}

// Next returns the next state change, waiting for one until ctx is done.
// After StateClosed has been delivered (or the subscription was closed) it
// returns ErrClosed.
func (sub *Subscription) Next(ctx context.Context) (StateChange, error) {
	if sub == nil {
		return StateChange{}, ErrNilSession
	}
	if ctx == nil {
		return StateChange{}, ErrNilContext
	}
	for {
		sub.mu.Lock()
		if len(sub.queue) > 0 {
			c := sub.queue[0]
			sub.queue = sub.queue[1:]
			sub.mu.Unlock()
			return c, nil
		}
		if sub.done {
			err := sub.err
			sub.mu.Unlock()
			return StateChange{}, err
		}
		sub.mu.Unlock()
		select {
		case <-sub.notify:
		case <-ctx.Done():
			return StateChange{}, ContextError(ctx)
		}
	}
}

// Close stops the subscription; queued changes are dropped.
func (sub *Subscription) Close() {
	if sub == nil {
		return
	}
	if sub.s != nil {
		sub.s.unsubscribe(sub)
	}
	sub.mu.Lock()
	sub.queue = nil
	sub.mu.Unlock()
	sub.finish(ErrClosed)
}

// OnStateChange registers f to be called synchronously, in order, for every
// state change of the Session; f must not block (it runs on the
// connection's goroutine: cancelling a context is fine). It returns the
// current state and session id, read atomically with the registration, and
// stop, which removes f. On a nil or closed Session f is not registered and
// the state returned is StateClosed.
func (s *Session) OnStateChange(f func(StateChange)) (state State, id int64, stop func()) {
	if s.check() != nil || f == nil {
		return StateClosed, 0, func() {}
	}
	return s.addHook(f)
}
