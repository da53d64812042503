package interop

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/lab/internal/peers"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// peerJob is a command one peer runs concurrently with the Go clients.
type peerJob struct {
	name string
	p    *peers.Peer
	cmd  string
}

// mixedLock runs mixedExclusive with Go Mutexes.
func mixedLock(t *testing.T, path, counter string, jobs []peerJob, goClients, n int, opts ...lock.Option) {
	mixedExclusive(t, path, counter, jobs, goClients, n, func(s *recipes.Session) (acquireFunc, error) {
		m, err := lock.New(s, path, opts...)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (func(context.Context) error, error) {
			if err := m.Lock(ctx); err != nil {
				return nil, err
			}
			return m.Unlock, nil
		}, nil
	})
}

// acquireFunc takes an exclusive holding and returns its release.
type acquireFunc func(ctx context.Context) (release func(context.Context) error, err error)

// mixedExclusive runs the peers' jobs and goClients Go clients (each n
// holdings, taken with the acquireFunc that newAcquire makes for its
// session) on one path at once; inside every holding each client increments
// the counter with a version-checked write. It then checks that the counter
// equals the number of holdings, that no two holdings overlap on
// CLOCK_MONOTONIC, and that no node is left under the path.
func mixedExclusive(t *testing.T, path, counter string, jobs []peerJob, goClients, n int, newAcquire func(*recipes.Session) (acquireFunc, error)) {
	e := ensemble(t)
	ctx := ctxFor(t, 5*time.Minute)
	h := newHistory()
	begin := history.Now()
	var wg sync.WaitGroup
	errs := make(chan error, len(jobs)+goClients)
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := j.p.Do(ctx, j.cmd); err != nil {
				errs <- fmt.Errorf("%s: %w", j.name, err)
			}
		}()
	}
	for g := range goClients {
		s := session(t, e.Addrs())
		if g == 0 {
			ensureCounter(t, s, counter)
		}
		acquire, err := newAcquire(s)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("go-%d", g+1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				release, err := acquire(ctx)
				if err != nil {
					errs <- fmt.Errorf("%s: acquire: %w", name, err)
					return
				}
				t0 := history.Now()
				_, err = increment(s, counter)
				t1 := history.Now()
				if uerr := release(ctx); uerr != nil && err == nil {
					err = uerr
				}
				if err != nil {
					errs <- fmt.Errorf("%s: %w", name, err)
					return
				}
				h.hold(name, path, "", t0, t1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	holds := 0
	for _, j := range jobs {
		inWindow(t, j.name, j.p.Holds(), begin, history.Now())
		h.peer(j.name, path, j.p, func(peers.Hold) string { return "" })
		holds += len(j.p.Holds())
	}
	total := goClients*n + holds
	s := session(t, e.Addrs())
	if got := counterValue(t, s, counter); got != int64(total) {
		t.Fatalf("counter = %d after %d holdings: an update was lost or overlapped", got, total)
	}
	h.check(t, checkers.MutualExclusion(1), total)
	noChildren(t, s, path)
	t.Logf("%d holdings (%d by peers), counter %d, no overlap", total, holds, total)
}

// TestMutexWithCuratorMutex: 2 Java InterProcessMutex and 2 Go Mutex clients,
// 200 acquisitions in all, on one path.
func TestMutexWithCuratorMutex(t *testing.T) {
	forEachRelease(t, func(t *testing.T, rel peers.Release) {
		e := ensemble(t)
		path := uniquePath(t, "lock")
		counter := path + "-counter"
		var jobs []peerJob
		for i := range 2 {
			p := startPeer(t, rel, peers.Curator, e.ConnectString())
			jobs = append(jobs, peerJob{fmt.Sprintf("curator-%d", i+1), p, fmt.Sprintf("lock-loop %s 50 %s", path, counter)})
		}
		mixedLock(t, path, counter, jobs, 2, 50)
	})
}

// TestMutexWithCuratorSelector: a Curator LeaderSelector (which takes an
// InterProcessMutex on its path), a Curator mutex and 2 Go Mutexes.
func TestMutexWithCuratorSelector(t *testing.T) {
	forEachRelease(t, func(t *testing.T, rel peers.Release) {
		e := ensemble(t)
		path := uniquePath(t, "selector")
		counter := path + "-counter"
		sel := startPeer(t, rel, peers.Curator, e.ConnectString())
		mtx := startPeer(t, rel, peers.Curator, e.ConnectString())
		jobs := []peerJob{
			{"curator-selector", sel, fmt.Sprintf("selector-loop %s 25 %s", path, counter)},
			{"curator-mutex", mtx, fmt.Sprintf("lock-loop %s 25 %s", path, counter)},
		}
		mixedLock(t, path, counter, jobs, 2, 25)
	})
}

// TestMutexWithKazooLock: 2 kazoo Locks and 2 Go Mutexes in kazoo's dialect.
func TestMutexWithKazooLock(t *testing.T) {
	forEachRelease(t, func(t *testing.T, rel peers.Release) {
		e := ensemble(t)
		path := uniquePath(t, "kazoo-lock")
		counter := path + "-counter"
		var jobs []peerJob
		for i := range 2 {
			p := startPeer(t, rel, peers.Kazoo, e.ConnectString())
			jobs = append(jobs, peerJob{fmt.Sprintf("kazoo-%d", i+1), p, fmt.Sprintf("lock-loop %s 25 %s", path, counter)})
		}
		mixedLock(t, path, counter, jobs, 2, 25, lock.WithDialect(recipes.Kazoo))
	})
}

// TestMultiMutexWithCuratorMultiLock: 2 Curator InterProcessMultiLocks and
// 2 Go MultiMutexes on the same two paths (Curator given them in our sorted
// order), plus a Curator InterProcessMutex on one of them: the counter
// loses no update, no two holdings overlap, no node is left.
func TestMultiMutexWithCuratorMultiLock(t *testing.T) {
	forEachRelease(t, func(t *testing.T, rel peers.Release) {
		e := ensemble(t)
		base := uniquePath(t, "multi")
		a, b := base+"/a", base+"/b"
		counter := base + "-counter"
		var jobs []peerJob
		for i := range 2 {
			p := startPeer(t, rel, peers.Curator, e.ConnectString())
			jobs = append(jobs, peerJob{fmt.Sprintf("curator-multi-%d", i+1), p, fmt.Sprintf("multi-loop 20 %s %s %s", counter, a, b)})
		}
		single := startPeer(t, rel, peers.Curator, e.ConnectString())
		jobs = append(jobs, peerJob{"curator-mutex", single, fmt.Sprintf("lock-loop %s 20 %s", a, counter)})
		mixedExclusive(t, a, counter, jobs, 2, 20, func(s *recipes.Session) (acquireFunc, error) {
			m, err := lock.NewMulti(s, []string{b, a})
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) (func(context.Context) error, error) {
				if err := m.Lock(ctx); err != nil {
					return nil, err
				}
				return m.Unlock, nil
			}, nil
		})
	})
}
