package queue_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/queue"
)

// BenchmarkQueue puts b.N items (one producer, one Put each) and takes them
// with 1 and 4 consumers, each with its own session (and so its own cached
// listing: they compete for the head item), and with 4 goroutines sharing
// one Queue (they share its listing and never collide), reporting
// throughput in items per second for each phase.
func BenchmarkQueue(b *testing.B) {
	for _, bc := range []struct {
		consumers int
		shared    bool
	}{{1, false}, {4, false}, {4, true}} {
		name := fmt.Sprintf("consumers=%d", bc.consumers)
		if bc.shared {
			name = fmt.Sprintf("goroutines=%d_one_queue", bc.consumers)
		}
		consumers := bc.consumers
		b.Run(name, func(b *testing.B) {
			e := ensemble(b)
			ctx := ctxT(b, 10*time.Minute)
			path := testPath(b)
			producer := newQueue(b, connect(b, e.Addrs()), path)
			qs := make([]*queue.Queue, consumers)
			for i := range qs {
				if bc.shared && i > 0 {
					qs[i] = qs[0]
					continue
				}
				qs[i] = newQueue(b, connect(b, e.Addrs()), path)
			}
			data := make([]byte, 100)
			b.ResetTimer()

			start := time.Now()
			for range b.N {
				if _, err := producer.Put(ctx, data); err != nil {
					b.Fatal(err)
				}
			}
			put := time.Since(start)

			start = time.Now()
			var left atomic.Int64
			left.Store(int64(b.N))
			var wg sync.WaitGroup
			for _, q := range qs {
				wg.Go(func() {
					for left.Add(-1) >= 0 {
						if _, err := q.Take(ctx); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			take := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/put.Seconds(), "puts/s")
			b.ReportMetric(float64(b.N)/take.Seconds(), "takes/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}
