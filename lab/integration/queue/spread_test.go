package queue_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/queue"
)

// TestTakeSpreads: with WithSpread, consumers that collide spread over the
// head of their listing (queue/spread.go) instead of racing for one item: with 4 and 8
// consumers taking 300 items put beforehand, every item is taken once and
// the consumers send at most 3 requests per item (2 is the floor: a
// getData and a delete; racing for the head cost 7 with 4 consumers).
func TestTakeSpreads(t *testing.T) {
	for _, consumers := range []int{4, 8} {
		t.Run(fmt.Sprint(consumers), func(t *testing.T) {
			const items = 300
			e := ensemble(t)
			ctx := ctxT(t, 2*time.Minute)
			path := testPath(t)
			producer := newQueue(t, connect(t, e.Addrs()), path)
			batch := make([][]byte, items)
			for i := range batch {
				batch[i] = fmt.Appendf(nil, "%d", i)
			}
			if _, err := producer.PutAll(ctx, batch); err != nil {
				t.Fatal(err)
			}
			var (
				mu    sync.Mutex
				seen  = map[string]int{}
				wg    sync.WaitGroup
				count []*zkcount.Counter
				start []zkcount.Counts
				left  = items
			)
			for range consumers {
				s, c := testutil.CountedSession(t, e.Addrs())
				q := newQueue(t, s, path, queue.WithSpread())
				count, start = append(count, c), append(start, c.Snapshot())
				wg.Go(func() {
					for {
						mu.Lock()
						if left == 0 {
							mu.Unlock()
							return
						}
						left--
						mu.Unlock()
						it, err := q.Take(ctx)
						if err != nil {
							t.Errorf("take: %v", err)
							return
						}
						mu.Lock()
						seen[string(it.Data)]++
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if len(seen) != items {
				t.Errorf("%d distinct items taken, want %d", len(seen), items)
			}
			for d, n := range seen {
				if n != 1 {
					t.Errorf("item %s taken %d times", d, n)
				}
			}
			var requests int64
			ops := map[zkcount.Op]int64{}
			for i, c := range count {
				d := c.Snapshot().Sub(start[i])
				requests += d.Total()
				for op, n := range d.Requests {
					ops[op] += n
				}
			}
			t.Logf("requests by op: %v", ops)
			perItem := float64(requests) / items
			t.Logf("%d consumers: %d requests for %d items, %.2f per item", consumers, requests, items, perItem)
			if perItem > 3 {
				t.Errorf("%.2f requests per item, want at most 3", perItem)
			}
		})
	}
}

// TestTakeStrictOrder: without WithSpread, consumers that collide keep to
// the head: each receives the items in the queue's order.
func TestTakeStrictOrder(t *testing.T) {
	const items, consumers = 200, 4
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	path := testPath(t)
	producer := newQueue(t, connect(t, e.Addrs()), path)
	batch := make([][]byte, items)
	for i := range batch {
		batch[i] = fmt.Appendf(nil, "%d", i)
	}
	if _, err := producer.PutAll(ctx, batch); err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		left = items
		got  = make([][]int32, consumers)
		wg   sync.WaitGroup
	)
	for c := range consumers {
		q := newQueue(t, connect(t, e.Addrs()), path)
		wg.Go(func() {
			for {
				mu.Lock()
				if left == 0 {
					mu.Unlock()
					return
				}
				left--
				mu.Unlock()
				it, err := q.Take(ctx)
				if err != nil {
					t.Errorf("take: %v", err)
					return
				}
				got[c] = append(got[c], it.Seq)
			}
		})
	}
	wg.Wait()
	total := 0
	for c, seqs := range got {
		total += len(seqs)
		for i := 1; i < len(seqs); i++ {
			if seqs[i] <= seqs[i-1] {
				t.Errorf("consumer %d received item %d after item %d", c, seqs[i], seqs[i-1])
			}
		}
	}
	if total != items {
		t.Errorf("%d items taken, want %d", total, items)
	}
}
