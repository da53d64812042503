package interop

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/lab/internal/peers"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
	sharedrecipe "github.com/zkrecipes/zkrecipes/shared"
)

// TestSemaphoreWithCuratorSemaphoreV2: 2 Curator InterProcessSemaphoreV2 and
// 2 Go Semaphores share 2 leases on one path; at no instant do more than 2
// clients hold a lease; the maximum the Go side records in the leases
// node's data (checked at every Go holding) does not disturb Curator.
func TestSemaphoreWithCuratorSemaphoreV2(t *testing.T) {
	forEachRelease(t, func(t *testing.T, rel peers.Release) {
		const leases, n = 2, 25
		e := ensemble(t)
		ctx := ctxFor(t, 5*time.Minute)
		path := uniquePath(t, "semaphore")
		counter := path + "-counter"
		h := newHistory()
		begin := history.Now()
		var jobs []peerJob
		for i := range 2 {
			p := startPeer(t, rel, peers.Curator, e.ConnectString())
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
					t0 := history.Now()
					for range 3 {
						if _, _, err := s.Conn().Get(counter); err != nil {
							errs <- err
						}
					}
					// Read while a lease is held, so the leases node is there.
					if data, _, err := s.Conn().Get(path + "/leases"); err != nil || string(data) != strconv.Itoa(leases) {
						errs <- fmt.Errorf("%s: leases node data %q, %v; want the recorded maximum %d", name, data, err, leases)
					}
					t1 := history.Now()
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
			inWindow(t, j.name, j.p.Holds(), begin, history.Now())
			h.peer(j.name, path, j.p, func(peers.Hold) string { return "" })
		}
		h.check(t, checkers.MutualExclusion(leases), 4*n)
		t.Logf("at most %d of 4 clients held a lease at once (limit %d)", maxConcurrent(h), leases)
		noChildren(t, session(t, e.Addrs()), path+"/leases")
	})
}

// maxConcurrent returns the most holdings open at one instant.
func maxConcurrent(h *holdings) int {
	type edge struct {
		t     int64
		delta int
	}
	var edges []edge
	for _, x := range history.Holdings(h.rec.History()) {
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

// TestSemaphoreCountWithCurator: Curator's InterProcessSemaphoreV2 with a
// SharedCount maximum and Go's count-based Semaphores share one path and
// one count, which both sides change. First step by step: a maximum
// lowered by Go keeps Curator out; a raise by Curator wakes a Go waiter; a
// raise by Go wakes a Curator waiter; a maximum lowered by Curator keeps
// Go out. Then 2 Curator and 2 Go clients loop while the count moves
// between 1 and 3, changed by each side in turn: the semaphore-max checker
// proves that the holders never exceeded the maximum in force.
func TestSemaphoreCountWithCurator(t *testing.T) {
	forEachRelease(t, func(t *testing.T, rel peers.Release) {
		const n = 20
		e := ensemble(t)
		ctx := ctxFor(t, 5*time.Minute)
		path := uniquePath(t, "semaphore-count")
		countPath, counter := path+"-max", path+"-counter"
		h := newHistory()
		admin := session(t, e.Addrs())
		ensureCounter(t, admin, counter)
		setter, err := sharedrecipe.NewCount(admin, countPath, 1)
		if err != nil {
			t.Fatal(err)
		}
		java := startPeer(t, rel, peers.Curator, e.ConnectString())
		// set changes the count from Go or, through the peer, from Curator,
		// recording the change with the interval it took.
		set := func(side string, v int32) {
			t.Helper()
			op := h.rec.Client("max-"+side).Invoke(history.FnSetMax, path, int64(v))
			var err error
			if side == "go" {
				_, err = setter.Set(ctx, v)
			} else {
				_, err = java.Do(ctx, fmt.Sprintf("count-set %s %d", countPath, v))
			}
			if err != nil {
				op.Unknown(err.Error())
				t.Fatalf("%s sets %d: %v", side, v, err)
			}
			op.OK(int64(v))
		}
		newSem := func() (*recipes.Session, *lock.Semaphore) {
			s := session(t, e.Addrs())
			c, err := sharedrecipe.NewCount(s, countPath, 1)
			if err != nil {
				t.Fatal(err)
			}
			sem, err := lock.NewSemaphoreCount(s, path, c)
			if err != nil {
				t.Fatal(err)
			}
			return s, sem
		}
		// acquire takes a lease for client name, recording the acquisition.
		acquire := func(name string, sem *lock.Semaphore, try bool) (*lock.Permit, error) {
			log := h.rec.Client(name)
			op := log.Invoke(history.FnAcquire, path, 0)
			var l *lock.Permit
			var err error
			if try {
				l, err = sem.TryAcquire(ctx)
			} else {
				l, err = sem.Acquire(ctx)
			}
			if err != nil {
				op.Fail(err.Error())
				return nil, err
			}
			op.OK(l.Fence().Token)
			log.Acquired(path, l.Fence().Token, "")
			return l, nil
		}
		release := func(name string, l *lock.Permit) {
			t.Helper()
			h.rec.Client(name).Released(path, l.Fence().Token)
			if err := l.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
		set("go", 1)
		_, semA := newSem()
		_, semW := newSem()
		a, err := acquire("go-a", semA, false)
		if err != nil {
			t.Fatal(err)
		}
		// Lowered by Go: Curator finds no lease.
		if out, err := java.Do(ctx, fmt.Sprintf("semcount-try %s %s 500", path, countPath)); err != nil || out != "none" {
			t.Fatalf("Curator's try at 1 held of 1 = %q, %v; want none", out, err)
		}
		// Raised by Curator: the Go waiter gets in.
		wDone := make(chan *lock.Permit, 1)
		go func() {
			l, err := acquire("go-w", semW, false)
			if err != nil {
				t.Errorf("go-w: %v", err)
			}
			wDone <- l
		}()
		waitChildren(t, ctx, admin, path+"/leases", 2)
		set("curator", 2)
		w := <-wDone
		if w == nil {
			t.FailNow()
		}
		// Raised by Go: the Curator waiter gets in.
		waiter := startPeer(t, rel, peers.Curator, e.ConnectString())
		jDone := make(chan error, 1)
		go func() {
			_, err := waiter.Do(ctx, fmt.Sprintf("semcount-loop %s %s 1 %s", path, countPath, counter))
			jDone <- err
		}()
		waitChildren(t, ctx, admin, path+"/leases", 3)
		select {
		case err := <-jDone:
			t.Fatalf("Curator acquired 3rd lease of 2: %v", err)
		default:
		}
		set("go", 3)
		if err := <-jDone; err != nil {
			t.Fatalf("Curator waiter after the raise to 3: %v", err)
		}
		// Lowered by Curator, 2 held: Go finds no lease.
		set("curator", 2)
		_, semT := newSem()
		if _, err := acquire("go-t", semT, true); !errors.Is(err, lock.ErrNoPermit) {
			t.Fatalf("Go's try at 2 held of 2 = %v, want ErrNoPermit", err)
		}
		release("go-a", a)
		release("go-w", w)

		// Everyone at once, the count moving.
		begin := history.Now()
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		var jobs []peerJob
		for i := range 2 {
			p := startPeer(t, rel, peers.Curator, e.ConnectString())
			jobs = append(jobs, peerJob{fmt.Sprintf("curator-%d", i+1), p, fmt.Sprintf("semcount-loop %s %s %d %s", path, countPath, n, counter)})
		}
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
			s, sem := newSem()
			name := fmt.Sprintf("go-%d", g+1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range n {
					l, err := acquire(name, sem, false)
					if err != nil {
						errs <- fmt.Errorf("%s: acquire: %w", name, err)
						return
					}
					for range 3 {
						if _, _, err := s.Conn().Get(counter); err != nil {
							errs <- err
						}
					}
					h.rec.Client(name).Released(path, l.Fence().Token)
					if err := l.Release(ctx); err != nil {
						errs <- fmt.Errorf("%s: release: %w", name, err)
						return
					}
				}
			}()
		}
		done := make(chan struct{})
		go func() {
			wg.Wait()
			close(done)
		}()
		changes := 0
		for i := 0; ; i++ {
			select {
			case <-done:
			case <-time.After(150 * time.Millisecond):
				side := "go"
				if i%2 == 1 {
					side = "curator"
				}
				set(side, []int32{3, 1, 2, 3, 2, 1}[i%6])
				changes++
				continue
			}
			break
		}
		if changes < 4 {
			set("curator", 3) // too fast for the loop above: one change more in the record at least
		}
		set("go", 3)
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		for _, p := range append([]*peers.Peer{waiter}, jobs[0].p, jobs[1].p) {
			for _, x := range p.Holds() {
				if x.Kind != "semcount" {
					continue
				}
				name := "curator-waiter"
				for _, j := range jobs {
					if j.p == p {
						name = j.name
					}
				}
				id := h.rec.NewOpID()
				h.rec.Add(history.Event{Client: name, Kind: history.KindInvoke, Op: id, Fn: history.FnAcquire, Key: path, Time: x.Value})
				h.rec.Add(history.Event{Client: name, Kind: history.KindOK, Op: id, Fn: history.FnAcquire, Key: path, Time: x.T0})
				h.hold(name, path, "", x.T0, x.T1)
			}
		}
		for _, j := range jobs {
			inWindow(t, j.name, j.p.Holds(), begin, history.Now())
		}
		h.check(t, checkers.SemaphoreMax(), 4*n+3)
		t.Logf("%d changes of the count; at most %d of 4 clients held a lease at once", changes, maxConcurrent(h))
		noChildren(t, admin, path+"/leases")
	})
}
