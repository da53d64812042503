package shared_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/shared"
)

func newLong(tb testing.TB, s *recipes.Session, path string, opts ...shared.LongOption) *shared.Long {
	tb.Helper()
	l, err := shared.NewLong(s, path, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// TestLongLayout: a missing node reads 0; the first change creates it with
// Curator's 8 bytes; results carry the values before and after.
func TestLongLayout(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	s := connect(t, e.Addrs())
	path := testPath(t) + "/n"
	l := newLong(t, s, path)
	if n, err := l.Get(ctx); err != nil || n != 0 {
		t.Fatalf("Get on a missing node = %d, %v", n, err)
	}
	if r, err := l.Increment(ctx); err != nil || r != (shared.Result{Succeeded: true, Pre: 0, Post: 1}) {
		t.Fatalf("Increment = %+v, %v", r, err)
	}
	if data, _, err := s.Conn().Get(path); err != nil || !bytes.Equal(data, []byte{0, 0, 0, 0, 0, 0, 0, 1}) {
		t.Fatalf("node data = %x, %v", data, err)
	}
	if r, err := l.Add(ctx, 1<<40); err != nil || !r.Succeeded || r.Pre != 1 || r.Post != 1+1<<40 {
		t.Fatalf("Add = %+v, %v", r, err)
	}
	if r, err := l.CompareAndSet(ctx, 5, 6); err != nil || r.Succeeded || r.Pre != 1+1<<40 {
		t.Fatalf("CompareAndSet with a wrong expectation = %+v, %v", r, err)
	}
	if r, err := l.CompareAndSet(ctx, 1+1<<40, -3); err != nil || !r.Succeeded || r.Post != -3 {
		t.Fatalf("CompareAndSet = %+v, %v", r, err)
	}
	if r, err := l.Decrement(ctx); err != nil || r.Post != -4 {
		t.Fatalf("Decrement = %+v, %v", r, err)
	}
	// Curator reads empty data as 0, and so do we.
	if _, err := s.Conn().Set(path, nil, -1); err != nil {
		t.Fatal(err)
	}
	if n, err := l.Get(ctx); err != nil || n != 0 {
		t.Fatalf("Get of empty data = %d, %v", n, err)
	}
	if _, err := s.Conn().Set(path, []byte{1, 2, 3}, -1); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Increment(ctx); !errors.Is(err, shared.ErrCorrupt) {
		t.Fatalf("Increment of 3-byte data = %v, want ErrCorrupt", err)
	}
}

// TestLongOutcomesExact: under contention with a single optimistic attempt
// many changes fail, and the value equals exactly the number of changes
// reported as succeeded.
func TestLongOutcomesExact(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	path := testPath(t)
	const writers, each = 4, 30
	var succeeded, failed atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		l := newLong(t, connect(t, e.Addrs()), path, shared.WithAttempts(1))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				r, err := l.Increment(ctx)
				if err != nil {
					errs <- err
					return
				}
				if r.Succeeded {
					succeeded.Add(1)
				} else {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	n, err := newLong(t, connect(t, e.Addrs()), path).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != succeeded.Load() {
		t.Fatalf("value %d, but %d increments reported success (%d failed)", n, succeeded.Load(), failed.Load())
	}
	t.Logf("%d succeeded, %d failed", succeeded.Load(), failed.Load())
}

// TestLongPromotion: a change whose optimistic attempts all lost to another
// writer fails without promotion (Succeeded false, nothing written); with
// promotion it waits for the lock (queued behind its holder) and succeeds
// once it holds it.
func TestLongPromotion(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	s := connect(t, e.Addrs())
	rival := connect(t, e.Addrs())
	rivalLong := newLong(t, rival, path+"/n")
	if _, err := rivalLong.TrySet(ctx, 10); err != nil {
		t.Fatal(err)
	}
	// The competing write lands between our read and our write, once.
	var raced atomic.Int32
	restore := hooks.SetBeforeWrite(func(p string) {
		if p == path+"/n" && raced.Add(1) == 1 {
			if _, err := rival.Conn().Set(p, shared.EncodeLong(100), -1); err != nil {
				t.Error(err)
			}
		}
	})
	defer restore()

	plain := newLong(t, s, path+"/n", shared.WithAttempts(1))
	if r, err := plain.Increment(ctx); err != nil || r.Succeeded || r.Pre != 10 {
		t.Fatalf("Increment that lost its only attempt = %+v, %v; want not succeeded, Pre 10", r, err)
	}
	if n, _ := plain.Get(ctx); n != 100 {
		t.Fatalf("value %d after a failed change, want the rival's 100", n)
	}

	raced.Store(0)
	holder, err := lock.New(rival, path+"/lock")
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	promoted := newLong(t, s, path+"/n", shared.WithAttempts(1), shared.WithPromotion(path+"/lock"))
	done := make(chan shared.Result, 1)
	go func() {
		r, err := promoted.Increment(ctx)
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	waitFor(t, 10*time.Second, "the promoted change to queue on the lock", func() bool {
		return len(testutil.Children(t, s, path+"/lock")) == 2
	})
	select {
	case r := <-done:
		t.Fatalf("the promoted change finished while the lock was held: %+v", r)
	default:
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if !r.Succeeded || r.Pre != 100 || r.Post != 101 {
			t.Fatalf("promoted Increment = %+v, want 100 -> 101", r)
		}
	case <-ctx.Done():
		t.Fatal("the promoted change never finished")
	}
	waitFor(t, 10*time.Second, "the promotion lock released", func() bool {
		return len(testutil.Children(t, s, path+"/lock")) == 0
	})
}

// TestLongUncertain: the write's answer is lost (half-open link); the
// change returns ErrUncertain, never a guessed Result.
func TestLongUncertain(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	link, err := e.NewLink("long-uncertain")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	ctx := ctxT(t, time.Minute)
	l := newLong(t, connect(t, link.Addrs()), path)
	if _, err := l.Increment(ctx); err != nil {
		t.Fatal(err)
	}
	// The next read must succeed and only the write be lost: drop answers
	// right after the read's answer arrives.
	restore := hooks.SetBeforeWrite(func(string) {
		if err := link.HalfOpen(); err != nil {
			t.Error(err)
		}
	})
	defer restore()
	r, err := l.Increment(ctx)
	if !errors.Is(err, shared.ErrUncertain) {
		t.Fatalf("Increment over a half-open link = %+v, %v; want ErrUncertain", r, err)
	}
	if n, err := newLong(t, admin, path).Get(ctx); err != nil || n != 2 {
		t.Fatalf("value %d, %v: the lost write should have been applied", n, err)
	}
	restore()
	if err := link.Heal(); err != nil {
		t.Fatal(err)
	}
}

// TestLongDoneCtxAndBadInput: a done ctx sends nothing; constructors
// validate.
func TestLongDoneCtxAndBadInput(t *testing.T) {
	e := ensemble(t)
	s, counter := testutil.CountedSession(t, e.Addrs())
	path := testPath(t)
	before := counter.Snapshot()
	if _, err := shared.NewLong(s, path, shared.WithAttempts(0)); !errors.Is(err, recipes.ErrBadArgument) {
		t.Errorf("NewLong(0 attempts) = %v", err)
	}
	// The promotion path is validated as lock.New validates its path (and
	// refused as a bad argument of NewLong): an empty one does not turn
	// promotion off.
	for _, bad := range []string{"", "bad", "/a//b", "/zookeeper/lock"} {
		if _, err := shared.NewLong(s, path, shared.WithPromotion(bad)); !errors.Is(err, recipes.ErrInvalidPath) || !errors.Is(err, recipes.ErrBadArgument) {
			t.Errorf("NewLong(promotion path %q) = %v, want recipes.ErrInvalidPath and recipes.ErrBadArgument", bad, err)
		}
	}
	if _, err := shared.NewLong(s, path, shared.WithPromotion(path+"-lock"), shared.WithPromotion("")); !errors.Is(err, recipes.ErrBadArgument) {
		t.Errorf("NewLong(promotion path replaced by \"\") = %v, want recipes.ErrBadArgument", err)
	}
	if _, err := shared.NewLong(nil, path); !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("NewLong(nil) = %v", err)
	}
	l := newLong(t, s, path, shared.WithPromotion(path+"-lock"))
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Get(done); !errors.Is(err, context.Canceled) {
		t.Errorf("Get(done) = %v", err)
	}
	if _, err := l.Increment(done); !errors.Is(err, context.Canceled) {
		t.Errorf("Increment(done) = %v", err)
	}
	if diff := counter.Snapshot().Sub(before); diff.Total() != 0 {
		t.Errorf("sent %v", diff.Requests)
	}
}
