package leader_test

import (
	"context"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/leader"
)

// BenchmarkHandoff measures a graceful handoff: from the leader calling
// Term.Release to the next participant's Campaign returning its term. It reports
// the time (ms/handoff; ms/resign is the part spent in Release, the delete's
// commit), and the requests and watch notifications the handoff costs on
// both sessions: 1 delete, 1 exists (the owner check), 1 getData (the new
// term's node watch, sent in the background); 1 notification wakes the next
// participant and 1 reaches the resigning leader's own node watch.
func BenchmarkHandoff(b *testing.B) {
	e := shared(b)
	path := "/leader-bench"
	cs := []*zkcount.Counter{zkcount.New(), zkcount.New()}
	els := make([]*leader.Election, 2)
	for i := range els {
		s := connectWrapped(b, e.Addrs(), cs[i].Wrap)
		els[i] = newElection(b, s, path)
	}
	ctx := context.Background()
	term, err := els[0].Campaign(ctx)
	if err != nil {
		b.Fatal(err)
	}
	cur := 0
	var total, resign time.Duration
	var reqs, notes int64
	snap := func() [2]zkcount.Counts { return [2]zkcount.Counts{cs[0].Snapshot(), cs[1].Snapshot()} }
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		next := 1 - cur
		got := make(chan *leader.Term, 1)
		s0 := cs[next].Snapshot()
		go func() {
			t, err := els[next].Campaign(ctx)
			if err != nil {
				b.Error(err)
			}
			got <- t
		}()
		// In line once its watch on the leader's node is set (a getData).
		waitFor(b, 10*time.Second, "the next participant in line", func() bool {
			return cs[next].Snapshot().Sub(s0).Req(zkcount.OpGetData) >= 1
		})
		before := snap()
		b.StartTimer()
		start := time.Now()
		if err := term.Release(ctx); err != nil {
			b.Fatal(err)
		}
		resign += time.Since(start)
		term = <-got
		total += time.Since(start)
		b.StopTimer()
		waitFor(b, 10*time.Second, "the new term's node watch", func() bool {
			return cs[next].Snapshot().Sub(before[next]).Req(zkcount.OpGetData) >= 1
		})
		after := snap()
		for i := range after {
			d := after[i].Sub(before[i])
			reqs += d.Total()
			notes += d.Notifications
		}
		cur = next
		b.StartTimer()
	}
	b.StopTimer()
	_ = term.Release(ctx)
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/handoff")
	b.ReportMetric(float64(resign.Microseconds())/1000/float64(b.N), "ms/resign")
	b.ReportMetric(float64(reqs)/float64(b.N), "requests/handoff")
	b.ReportMetric(float64(notes)/float64(b.N), "notifications/handoff")
}
