package recipes

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Stream is a channel of values that a recipe produces on its own
// goroutines (leader.Election.Watch, twophase.Site.Run),
// with the two things a bare channel lacks: the reader can learn why it
// closed (Err), and can stop reading early without leaving the producer
// behind (Stop).
//
// A Stream is safe for concurrent use; C has one reader in the usual case,
// but Err and Stop may be called from anywhere.
type Stream[T any] struct {
	// C delivers the values. It is closed once the producer has returned:
	// its ctx ended, Stop was called, or it met an error it does not retry
	// (see Err). Once its ctx is done or Stop was called, the producer
	// gives up the send it is blocked on, if any, and returns: it never
	// waits for a reader that went away.
	C <-chan T

	stop     context.CancelCauseFunc
	stopOnce sync.Once
	done     chan struct{} // closed after err is set and before C is closed
	err      error
}

// errStopped is the cause of a producer's context ended by Stop.
var errStopped = errors.New("recipes: stream stopped")

// StartStream runs produce on a goroutine of its own with a context that is
// done when ctx is, or when the reader calls Stop, and closes C when
// produce returns. produce sends on out and must give up a send once its
// context is done (select on its Done channel). It returns nil when it
// stops because its context ended, or the error that ended it; that error
// becomes Err. A nil ctx (ErrNilContext) or a nil produce yields a Stream
// whose C is already closed and whose Err wraps ErrBadArgument; nothing
// runs.
func StartStream[T any](ctx context.Context, produce func(ctx context.Context, out chan<- T) error) *Stream[T] {
	out := make(chan T)
	s := &Stream[T]{C: out, done: make(chan struct{})}
	if ctx == nil || produce == nil {
		err := ErrNilContext
		if ctx != nil {
			err = fmt.Errorf("%w: nil produce function", ErrBadArgument)
		}
		s.stop = func(error) {}
		s.finish(err, out)
		return s
	}
	pctx, stop := context.WithCancelCause(ctx)
	s.stop = stop
	go func() {
		err := produce(pctx, out)
		if pctx.Err() != nil && (err == nil || errors.Is(err, pctx.Err())) {
			// Ended because its context did: say whose doing that was
			// (the first to cancel pctx set its cause).
			if errors.Is(context.Cause(pctx), errStopped) {
				err = nil
			} else {
				err = ContextError(ctx)
			}
		}
		stop(nil)
		s.finish(err, out)
	}()
	return s
}

// finish records err and closes the stream: done first, so that a reader
// that saw C closed also sees Err.
func (s *Stream[T]) finish(err error, out chan T) {
	s.err = err
	close(s.done)
	close(out)
}

// Stop ends the stream: the producer's context is cancelled, so it sends
// nothing more and returns, after the ZooKeeper request it has in flight,
// if any; C is closed then. Stop does not wait for that: read C until it
// is closed to wait. Err is nil after a Stop, unless the stream had already
// ended for another reason. Calling Stop again, or after C closed, does
// nothing.
func (s *Stream[T]) Stop() {
	s.stopOnce.Do(func() { s.stop(errStopped) })
}

// Err returns nil while C is open. Once C is closed it returns why: nil
// when the reader called Stop; ctx's error (ContextError: errors.Is
// matches ctx.Err() and the caller's cause) when the ctx given to the
// producer ended; otherwise the producer's own error (for instance one
// wrapping ErrClosed when the session was closed).
func (s *Stream[T]) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}
