package queue_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestTakeThroughCuts: the consumer's link is cut three times while it
// takes; the session survives, and every item is delivered (an item whose
// delete was in flight may come back with ErrUncertain, its data included,
// but none is lost).
func TestTakeThroughCuts(t *testing.T) {
	const items = 150
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	path := testPath(t)
	link, err := e.NewLink("consumer")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = link.Close() })
	cs := connect(t, link.Addrs())
	consumer := newQueue(t, cs, path)
	producer := newQueue(t, connect(t, e.Addrs()), path)
	for k := 0; k < items; k += 50 {
		batch := make([][]byte, 50)
		for i := range batch {
			batch[i] = fmt.Appendf(nil, "%d", k+i)
		}
		if _, err := producer.PutAll(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	sid := cs.ID()
	// Cut from another goroutine while the consumer takes, so that cuts
	// land in the middle of requests.
	var taken atomic.Int32
	cutErr := make(chan error, 1)
	go func() {
		cutErr <- func() error {
			for _, at := range []int32{30, 70, 110} {
				for taken.Load() < at {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					time.Sleep(time.Millisecond)
				}
				if err := link.Cut(); err != nil {
					return err
				}
				for cs.State() != recipes.StateSuspended {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					time.Sleep(5 * time.Millisecond)
				}
				if err := link.Restore(); err != nil {
					return err
				}
			}
			return nil
		}()
	}()
	got := make(map[string]int)
	uncertain := 0
	for len(got) < items {
		it, err := consumer.Take(ctx)
		switch {
		case errors.Is(err, queue.ErrUncertain):
			uncertain++
		case err != nil:
			t.Fatalf("Take after %d items: %v", len(got), err)
		}
		got[string(it.Data)]++
		taken.Store(int32(len(got)))
	}
	if err := <-cutErr; err != nil {
		t.Fatal(err)
	}
	if cs.ID() != sid {
		t.Fatalf("the session changed: the cuts were too long")
	}
	for data, n := range got {
		if n > 1 {
			t.Errorf("item %s delivered %d times", data, n)
		}
	}
	if n, err := producer.Len(ctx); err != nil || n != 0 {
		t.Errorf("Len at the end = %d, %v", n, err)
	}
	t.Logf("%d items, %d returned with ErrUncertain", items, uncertain)
}
