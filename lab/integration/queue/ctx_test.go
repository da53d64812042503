package queue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestDoneCtxSendsNothing: with a cancelled ctx, every entry point returns
// the ctx's cause and sends no request, on a queue whose paths do not exist
// yet (so that a write would create parents) and on a held claim.
func TestDoneCtxSendsNothing(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	s, counter := testutil.CountedSession(t, e.Addrs())
	path := testPath(t)
	q := newQueue(t, s, path+"/fifo")
	pq := newQueue(t, s, path+"/prio", queue.WithPriority())
	held := newQueue(t, s, path+"/held")
	if _, err := held.Put(ctx, []byte("x")); err != nil {
		t.Fatal(err)
	}
	c, err := held.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancelCause(ctx)
	cause := errors.New("caller gave up")
	cancel(cause)
	calls := map[string]func() error{
		"Put":         func() error { _, err := q.Put(done, []byte("x")); return err },
		"PutAll":      func() error { _, err := q.PutAll(done, [][]byte{[]byte("x"), []byte("y")}); return err },
		"PutPriority": func() error { _, err := pq.PutPriority(done, []byte("x"), 7); return err },
		"Take":        func() error { _, err := q.Take(done); return err },
		"Poll":        func() error { _, err := q.Poll(done); return err },
		"Claim":       func() error { _, err := q.Claim(done); return err },
		"Peek":        func() error { _, err := q.Peek(done); return err },
		"Len":         func() error { _, err := q.Len(done); return err },
		"Ack":         func() error { return c.Ack(done) },
		"Release":     func() error { return c.Release(done) },
	}
	for name, call := range calls {
		// Several tries: a select between a ready ctx and ready work picks
		// either at random.
		for range 20 {
			before := counter.Snapshot()
			err := call()
			if d := counter.Snapshot().Sub(before); d.Total() != 0 {
				t.Errorf("%s with a done ctx sent %v", name, d.Requests)
				break
			}
			if !errors.Is(err, cause) {
				t.Errorf("%s with a done ctx: %v, want its cause", name, err)
				break
			}
		}
	}
	if err := c.Context().Err(); err != nil {
		t.Errorf("the claim changed: %v", err)
	}
	if err := c.Ack(ctx); err != nil {
		t.Errorf("Ack with a live ctx: %v", err)
	}
}

// TestNilOrClosedSessionNoPanic: New refuses a nil Session
// (recipes.ErrNilSession); a Queue on a closed Session, or called with a
// nil ctx, answers every method with an error (recipes.ErrClosed,
// recipes.ErrBadArgument) and never panics.
func TestNilOrClosedSessionNoPanic(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	closed := connect(t, e.Addrs())
	testutil.CloseSession(t, closed)
	live := connect(t, e.Addrs())
	path := testPath(t)
	if q, err := queue.New(nil, path, queue.WithPriority(), nil); q != nil || !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("New with a nil session: %v, %v", q, err)
	}
	cases := []struct {
		name string
		q    *queue.Queue
		ctx  context.Context
		want error
	}{
		{"closed session", newQueue(t, closed, path, queue.WithPriority()), ctx, recipes.ErrClosed},
		{"nil ctx", newQueue(t, live, path, queue.WithPriority(), nil), nil, recipes.ErrBadArgument},
	}
	for _, tc := range cases {
		calls := map[string]func() error{
			"Put":         func() error { _, err := tc.q.Put(tc.ctx, []byte("x")); return err },
			"PutAll":      func() error { _, err := tc.q.PutAll(tc.ctx, [][]byte{[]byte("x")}); return err },
			"PutPriority": func() error { _, err := tc.q.PutPriority(tc.ctx, []byte("x"), 1); return err },
			"Take":        func() error { _, err := tc.q.Take(tc.ctx); return err },
			"Poll":        func() error { _, err := tc.q.Poll(tc.ctx); return err },
			"Claim":       func() error { _, err := tc.q.Claim(tc.ctx); return err },
			"Peek":        func() error { _, err := tc.q.Peek(tc.ctx); return err },
			"Len":         func() error { _, err := tc.q.Len(tc.ctx); return err },
		}
		for name, call := range calls {
			if err := call(); !errors.Is(err, tc.want) {
				t.Errorf("%s: %s: %v, want %v", tc.name, name, err, tc.want)
			}
		}
		if tc.q.Path() != path {
			t.Errorf("%s: Path = %q", tc.name, tc.q.Path())
		}
		_ = tc.q.MaxData() // no panic, no request
	}
}
