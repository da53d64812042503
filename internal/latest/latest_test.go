package latest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestBoxTable: put and take in sequence, one goroutine.
func TestBoxTable(t *testing.T) {
	type step struct {
		put  int // > 0: Put(put); 0: take
		want int // for a take: the value, 0 for none
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"empty", []step{{0, 0}}},
		{"one", []step{{1, 0}, {0, 1}, {0, 0}}},
		{"newest wins", []step{{1, 0}, {2, 0}, {3, 0}, {0, 3}, {0, 0}}},
		{"after a take", []step{{1, 0}, {0, 1}, {2, 0}, {0, 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBox[int]()
			for i, st := range tc.steps {
				if st.put > 0 {
					b.Put(st.put)
					continue
				}
				v, ok := b.take()
				if got := map[bool]int{true: v}[ok]; got != st.want || ok != (st.want != 0) {
					t.Fatalf("step %d: take = %d, %v; want %d", i, v, ok, st.want)
				}
			}
		})
	}
}

func recv[T any](t *testing.T, c <-chan T) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("nothing delivered")
	}
	panic("unreachable")
}

// TestDeliverCoalesces: values put while nobody reads reach the reader as
// the newest one, possibly after older ones already handed over, never an
// older one after a newer one; Deliver returns when stop is closed even
// with a value waiting for the reader.
func TestDeliverCoalesces(t *testing.T) {
	b := NewBox[int]()
	out := make(chan int)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		b.Deliver(context.Background(), out, stop)
		close(done)
	}()
	for i := 1; i <= 5; i++ {
		b.Put(i)
	}
	for last := 0; last != 5; {
		v := recv(t, out)
		if v <= last {
			t.Fatalf("got %d after %d", v, last)
		}
		last = v
	}
	b.Put(6) // left for the reader, which stops instead
	close(stop)
	recv(t, done)
}

// TestDeliverEndsWithCtx: a done ctx ends Deliver with a value waiting.
func TestDeliverEndsWithCtx(t *testing.T) {
	b := NewBox[int]()
	b.Put(1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		b.Deliver(ctx, make(chan int), nil)
		close(done)
	}()
	cancel()
	recv(t, done)
}

// TestRace: putters and a reader run concurrently (run with -race). With
// one putter the reader sees strictly growing values; with one or
// several, the reader gets the value put after they all ended.
func TestRace(t *testing.T) {
	for _, putters := range []int{1, 8} {
		b := NewBox[int]()
		out := make(chan int)
		ctx, cancel := context.WithCancel(context.Background())
		go b.Deliver(ctx, out, nil)
		const n = 20000
		var wg sync.WaitGroup
		for p := range putters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 1; i <= n; i++ {
					b.Put(p*n + i)
				}
			}()
		}
		final := -1
		go func() {
			wg.Wait()
			b.Put(final)
		}()
		last := 0
		for {
			v := recv(t, out)
			if v == final {
				break
			}
			if putters == 1 && v <= last {
				t.Fatalf("1 putter: got %d after %d", v, last)
			}
			last = v
		}
		cancel()
	}
}

// TestStream: what follow puts reaches C; follow's error becomes Err;
// Stop ends follow and Err is nil; a nil ctx closes C at once.
func TestStream(t *testing.T) {
	boom := errors.New("boom")
	st := Stream(context.Background(), func(ctx context.Context, put func(string)) error {
		put("a")
		<-ctx.Done() // until Stop
		return nil
	})
	if v := recv(t, st.C); v != "a" {
		t.Fatalf("got %q", v)
	}
	st.Stop()
	if _, ok := <-st.C; ok {
		t.Fatal("value after Stop")
	}
	if err := st.Err(); err != nil {
		t.Fatalf("Err after Stop = %v", err)
	}

	st = Stream(context.Background(), func(context.Context, func(string)) error { return boom })
	for range st.C {
	}
	if err := st.Err(); !errors.Is(err, boom) {
		t.Fatalf("Err = %v, want boom", err)
	}

	//lint:ignore SA1012 a nil ctx is the input under test
	st = Stream(nil, func(context.Context, func(string)) error { t.Error("follow ran"); return nil }) //nolint:staticcheck
	for range st.C {
	}
	if err := st.Err(); !errors.Is(err, recipes.ErrBadArgument) {
		t.Fatalf("nil ctx: Err = %v", err)
	}
}
