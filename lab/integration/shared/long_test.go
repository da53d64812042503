package shared_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
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
	testutil.RequireHooks(t)
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
	testutil.RequireHooks(t)
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

// TestLongConcurrentPromotions: one promoted Long shared by 8 goroutines
// (20 increments each, 1 optimistic attempt, so that many changes are
// promoted at the same time): no change fails with an error (before, a
// promotion while another of the same Long was under way failed with
// lock.ErrAlreadyHeld), and the value is exactly the number of
// increments. A change that did not succeed (its one attempt under the
// lock lost to an optimistic one) is made again.
func TestLongConcurrentPromotions(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, 3*time.Minute)
	path := testPath(t)
	s := connect(t, e.Addrs())
	l := newLong(t, s, path+"/n", shared.WithAttempts(1), shared.WithPromotion(path+"/lock"))
	const goroutines, each = 8, 20
	var again atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				for {
					r, err := l.Increment(ctx)
					if err != nil {
						errs <- err
						return
					}
					if r.Succeeded {
						break
					}
					again.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		failed++
		t.Error(err)
	}
	if failed > 0 {
		t.Fatalf("%d of %d goroutines stopped on an error", failed, goroutines)
	}
	if n, err := l.Get(ctx); err != nil || n != goroutines*each {
		t.Fatalf("value %d, %v; want %d", n, err, goroutines*each)
	}
	waitFor(t, 10*time.Second, "the promotion lock released", func() bool {
		return len(testutil.Children(t, s, path+"/lock")) == 0
	})
	t.Logf("%d changes made again", again.Load())
}

// TestLongPromotionWaitHonoursCtx: a change that needs promotion while
// another change of the same Long is promoted waits for it in the process,
// sending nothing to the lock, and ends with its ctx's error when ctx
// ends; the other change completes once the lock is free, and a later
// promotion goes through.
func TestLongPromotionWaitHonoursCtx(t *testing.T) {
	testutil.RequireHooks(t)
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	s, counter := testutil.CountedSession(t, e.Addrs())
	rival := connect(t, e.Addrs())
	if _, err := newLong(t, rival, path+"/n").TrySet(ctx, 10); err != nil {
		t.Fatal(err)
	}
	// While racing > 0, a rival write lands between each of our reads and
	// writes: every optimistic attempt loses.
	var racing, raced atomic.Int64
	restore := hooks.SetBeforeWrite(func(p string) {
		if p == path+"/n" && racing.Add(-1) >= 0 {
			if _, err := rival.Conn().Set(p, shared.EncodeLong(100+raced.Add(1)), -1); err != nil {
				t.Error(err)
			}
		}
	})
	defer restore()
	holder, err := lock.New(rival, path+"/lock")
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	l := newLong(t, s, path+"/n", shared.WithAttempts(1), shared.WithPromotion(path+"/lock"))

	racing.Store(1 << 20)
	first := make(chan shared.Result, 1)
	go func() {
		r, err := l.Increment(ctx)
		if err != nil {
			t.Error(err)
		}
		first <- r
	}()
	waitFor(t, 10*time.Second, "the first change to queue on the lock", func() bool {
		return len(testutil.Children(t, s, path+"/lock")) == 2
	})
	// The second change loses its attempt (the rival's write, then the
	// answer to ours), and then needs the promotion the first has.
	replied := counter.Snapshot().ReplyBytes[zkcount.OpSetData]
	waiting, cancel := context.WithCancel(ctx)
	defer cancel()
	second := make(chan error, 1)
	go func() {
		_, err := l.Increment(waiting)
		second <- err
	}()
	waitFor(t, 10*time.Second, "the second change's write answered", func() bool {
		return raced.Load() == 2 && counter.Snapshot().ReplyBytes[zkcount.OpSetData] > replied
	})
	sent := counter.Snapshot()
	cancel()
	select {
	case err := <-second:
		if !errors.Is(err, context.Canceled) || errors.Is(err, lock.ErrAlreadyHeld) {
			t.Fatalf("the waiting change = %v; want context.Canceled", err)
		}
	case <-ctx.Done():
		t.Fatal("the waiting change did not end with its ctx")
	}
	if diff := counter.Snapshot().Sub(sent); diff.Total() != 0 {
		t.Errorf("the waiting change sent %v", diff.Requests)
	}
	if n := len(testutil.Children(t, s, path+"/lock")); n != 2 {
		t.Fatalf("%d nodes under the lock, want the holder's and the first change's", n)
	}

	racing.Store(0)
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-first:
		if !r.Succeeded || r.Pre != 102 || r.Post != 103 {
			t.Fatalf("first change = %+v, want 102 -> 103", r)
		}
	case <-ctx.Done():
		t.Fatal("the first change never finished")
	}
	// One more lost attempt: this change is promoted too, with the lock
	// free now.
	racing.Store(1)
	if r, err := l.Increment(ctx); err != nil || !r.Succeeded || r.Pre != 103 || r.Post != 104 {
		t.Fatalf("later promoted change = %+v, %v; want 103 -> 104", r, err)
	}
	if raced.Load() != 3 {
		t.Fatalf("%d rival writes, want 3: the later change was not promoted", raced.Load())
	}
	waitFor(t, 10*time.Second, "the promotion lock released", func() bool {
		return len(testutil.Children(t, s, path+"/lock")) == 0
	})
}

// TestLongOverflow: a change whose result does not fit in an int64 is
// refused after the read (an error wrapping shared.ErrOverflow and
// recipes.ErrBadArgument, the Result's Pre the value read), is
// not promoted and writes nothing: the node keeps its value and version.
// Results at the very ends of the range are written.
func TestLongOverflow(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	s, counter := testutil.CountedSession(t, e.Addrs())
	l := newLong(t, s, path+"/n", shared.WithPromotion(path+"/lock"))
	add := func(d int64) func() (shared.Result, error) {
		return func() (shared.Result, error) { return l.Add(ctx, d) }
	}
	for _, tc := range []struct {
		name   string
		start  int64
		change func() (shared.Result, error)
		post   int64 // when it fits
		fits   bool
	}{
		{"Add(MaxInt64) to 1", 1, add(math.MaxInt64), 0, false},
		{"Add(2) to MaxInt64-1", math.MaxInt64 - 1, add(2), 0, false},
		{"Increment of MaxInt64", math.MaxInt64, func() (shared.Result, error) { return l.Increment(ctx) }, 0, false},
		{"Add(MinInt64) to -1", -1, add(math.MinInt64), 0, false},
		{"Add(-MaxInt64) to -2", -2, add(-math.MaxInt64), 0, false},
		{"Decrement of MinInt64", math.MinInt64, func() (shared.Result, error) { return l.Decrement(ctx) }, 0, false},
		{"Add(MaxInt64) to 0", 0, add(math.MaxInt64), math.MaxInt64, true},
		{"Add(MinInt64) to 0", 0, add(math.MinInt64), math.MinInt64, true},
		{"Add(MinInt64) to MaxInt64", math.MaxInt64, add(math.MinInt64), -1, true},
		{"Increment of MaxInt64-1", math.MaxInt64 - 1, func() (shared.Result, error) { return l.Increment(ctx) }, math.MaxInt64, true},
	} {
		if r, err := l.TrySet(ctx, tc.start); err != nil || !r.Succeeded {
			t.Fatalf("%s: TrySet(%d) = %+v, %v", tc.name, tc.start, r, err)
		}
		_, st, err := s.Conn().Get(path + "/n")
		if err != nil {
			t.Fatal(err)
		}
		before := counter.Snapshot()
		r, err := tc.change()
		diff := counter.Snapshot().Sub(before)
		if tc.fits {
			if err != nil || r != (shared.Result{Succeeded: true, Pre: tc.start, Post: tc.post}) {
				t.Errorf("%s = %+v, %v; want %d -> %d", tc.name, r, err, tc.start, tc.post)
			}
			continue
		}
		if !errors.Is(err, shared.ErrOverflow) || !errors.Is(err, recipes.ErrBadArgument) || r != (shared.Result{Pre: tc.start}) {
			t.Errorf("%s = %+v, %v; want shared.ErrOverflow and recipes.ErrBadArgument, Pre %d", tc.name, r, err, tc.start)
		}
		if diff.Total() != diff.Req(zkcount.OpGetData) || diff.Req(zkcount.OpGetData) != 1 {
			t.Errorf("%s sent %v; want 1 getData only", tc.name, diff.Requests)
		}
		data, st2, err := s.Conn().Get(path + "/n")
		if err != nil || !bytes.Equal(data, shared.EncodeLong(tc.start)) || st2.Version != st.Version {
			t.Errorf("%s: node = %x at version %d, %v; want %d at version %d", tc.name, data, st2.Version, err, tc.start, st.Version)
		}
	}
}
