package recipes_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes"
)

var errProducer = errors.New("producer: gave up")

// drain reads s.C until it closes (failing the test after a minute) and
// returns what it read.
func drain[T any](t *testing.T, s *recipes.Stream[T]) []T {
	t.Helper()
	var got []T
	deadline := time.After(time.Minute)
	for {
		select {
		case v, ok := <-s.C:
			if !ok {
				return got
			}
			got = append(got, v)
		case <-deadline:
			t.Fatal("stream not closed after a minute")
		}
	}
}

// blocked is a producer that sends 1, 2, 3, ... until its context ends,
// and closes exited when it returns.
func blocked(exited chan<- struct{}) func(ctx context.Context, out chan<- int) error {
	return func(ctx context.Context, out chan<- int) error {
		defer close(exited)
		for i := 1; ; i++ {
			select {
			case out <- i:
			case <-ctx.Done():
				return recipes.ContextError(ctx)
			}
		}
	}
}

// waitClosed fails the test unless ch is closed within a minute.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Fatalf("%s: not within a minute", what)
	}
}

// TestStream: C carries the producer's values and closes when it returns;
// Err is nil while C is open and then says why it closed: the producer's
// error, ctx's error (context.Canceled and the caller's cause, or the
// deadline), or nil after Stop. A producer blocked on a send returns once
// the reader stops or ctx ends.
func TestStream(t *testing.T) {
	t.Run("producer error", func(t *testing.T) {
		s := recipes.StartStream(context.Background(), func(ctx context.Context, out chan<- int) error {
			for i := range 3 {
				select {
				case out <- i:
				case <-ctx.Done():
					return nil
				}
			}
			return errProducer
		})
		if got := drain(t, s); len(got) != 3 || got[2] != 2 {
			t.Fatalf("values %v", got)
		}
		if err := s.Err(); !errors.Is(err, errProducer) {
			t.Fatalf("Err = %v, want the producer's error", err)
		}
		s.Stop() // after the end: nothing changes
		if err := s.Err(); !errors.Is(err, errProducer) {
			t.Fatalf("Err after a late Stop = %v", err)
		}
	})
	t.Run("Err is nil while open", func(t *testing.T) {
		exited := make(chan struct{})
		s := recipes.StartStream(context.Background(), blocked(exited))
		if v := <-s.C; v != 1 {
			t.Fatalf("first value %d", v)
		}
		if err := s.Err(); err != nil {
			t.Fatalf("Err while open = %v", err)
		}
		s.Stop()
		s.Stop()
		waitClosed(t, exited, "producer exit after Stop")
		drain(t, s)
		if err := s.Err(); err != nil {
			t.Fatalf("Err after Stop = %v, want nil", err)
		}
	})
	t.Run("Stop while the producer is blocked sending", func(t *testing.T) {
		exited := make(chan struct{})
		s := recipes.StartStream(context.Background(), blocked(exited))
		s.Stop() // the reader never reads
		waitClosed(t, exited, "producer exit after Stop")
		if err := s.Err(); err != nil {
			t.Fatalf("Err after Stop = %v, want nil", err)
		}
		// C is unbuffered: nothing was sent, and it closes.
		if got := drain(t, s); len(got) != 0 {
			t.Fatalf("values after Stop: %v", got)
		}
	})
	t.Run("ctx cancelled with a cause while blocked sending", func(t *testing.T) {
		exited := make(chan struct{})
		ctx, cancel := context.WithCancelCause(context.Background())
		s := recipes.StartStream(ctx, blocked(exited))
		cancel(errCaller)
		waitClosed(t, exited, "producer exit after cancel")
		drain(t, s)
		if err := s.Err(); !errors.Is(err, context.Canceled) || !errors.Is(err, errCaller) {
			t.Fatalf("Err = %v, want context.Canceled and the cause", err)
		}
		s.Stop()
		if err := s.Err(); !errors.Is(err, errCaller) {
			t.Fatalf("Err after a late Stop = %v", err)
		}
	})
	t.Run("producer returns nil when its ctx ends", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		s := recipes.StartStream(ctx, func(ctx context.Context, out chan<- int) error {
			<-ctx.Done()
			return nil
		})
		drain(t, s)
		if err := s.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Err = %v, want the deadline", err)
		}
	})
	t.Run("already-done ctx", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(errCaller)
		sent := false
		s := recipes.StartStream(ctx, func(ctx context.Context, out chan<- int) error {
			if ctx.Err() != nil {
				return nil
			}
			sent = true
			return nil
		})
		drain(t, s)
		if sent || !errors.Is(s.Err(), errCaller) {
			t.Fatalf("sent %v, Err %v", sent, s.Err())
		}
	})
	t.Run("nil ctx", func(t *testing.T) {
		ran := false
		s := recipes.StartStream(nil, func(ctx context.Context, out chan<- int) error { //nolint:staticcheck // a nil ctx on purpose
			ran = true
			return nil
		})
		if got := drain(t, s); len(got) != 0 || ran || !errors.Is(s.Err(), recipes.ErrBadArgument) {
			t.Fatalf("values %v, ran %v, Err %v", got, ran, s.Err())
		}
		s.Stop()
	})
	t.Run("nil produce", func(t *testing.T) {
		// It panicked on the stream's goroutine, killing the process.
		s := recipes.StartStream[int](context.Background(), nil)
		if got := drain(t, s); len(got) != 0 || !errors.Is(s.Err(), recipes.ErrBadArgument) {
			t.Fatalf("values %v, Err %v", got, s.Err())
		}
		s.Stop()
	})
}
