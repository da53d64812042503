package interop

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/chaos"
	"github.com/zkrecipes/zkrecipes/lab/internal/peers"
	"github.com/zkrecipes/zkrecipes/lock"
)

// TestSemaphoreWithCuratorSemaphoreV2: 2 Curator InterProcessSemaphoreV2 and
// 2 Go Semaphores share 2 leases on one path; at no instant do more than 2
// clients hold a lease.
func TestSemaphoreWithCuratorSemaphoreV2(t *testing.T) {
	const leases, n = 2, 25
	e := ensemble(t)
	ctx := ctxFor(t, 5*time.Minute)
	path := uniquePath(t, "semaphore")
	counter := path + "-counter"
	h := newHistory()
	begin := chaos.Now()
	var jobs []peerJob
	for i := range 2 {
		p := startPeer(t, peers.Curator, e.ConnectString())
		jobs = append(jobs, peerJob{fmt.Sprintf("curator-%d", i+1), p, fmt.Sprintf("sem-loop %s %d %d %s", path, n, leases, counter)})
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := j.p.Do(ctx, j.cmd); err != nil {
				errs <- fmt.Errorf("%s: %w", j.name, err)
			}
		}()
	}
	for g := range 2 {
		s := session(t, e.Addrs())
		if g == 0 {
			ensureCounter(t, s, counter)
		}
		sem, err := lock.NewSemaphore(s, path, leases)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("go-%d", g+1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				l, err := sem.Acquire(ctx)
				if err != nil {
					errs <- fmt.Errorf("%s: acquire: %w", name, err)
					return
				}
				t0 := chaos.Now()
				for range 3 {
					if _, _, err := s.Conn().Get(counter); err != nil {
						errs <- err
					}
				}
				t1 := chaos.Now()
				if err := l.Release(ctx); err != nil {
					errs <- fmt.Errorf("%s: release: %w", name, err)
					return
				}
				h.hold(name, path, "", t0, t1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, j := range jobs {
		inWindow(t, j.name, j.p.Holds(), begin, chaos.Now())
		h.peer(j.name, path, j.p, func(peers.Hold) string { return "" })
	}
	h.check(t, chaos.MutualExclusion(leases), 4*n)
	t.Logf("at most %d of 4 clients held a lease at once (limit %d)", maxConcurrent(h), leases)
	noChildren(t, session(t, e.Addrs()), path+"/leases")
}

// maxConcurrent returns the most holdings open at one instant.
func maxConcurrent(h *history) int {
	type edge struct {
		t     int64
		delta int
	}
	var edges []edge
	for _, x := range chaos.Holdings(h.rec.History()) {
		edges = append(edges, edge{x.From, 1}, edge{x.To, -1})
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].t != edges[j].t {
			return edges[i].t < edges[j].t
		}
		return edges[i].delta < edges[j].delta
	})
	most, cur := 0, 0
	for _, e := range edges {
		cur += e.delta
		most = max(most, cur)
	}
	return most
}
