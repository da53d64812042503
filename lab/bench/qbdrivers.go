package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/barrier"
	"github.com/zkrecipes/zkrecipes/queue"
)

// The drivers' QueueTake, BarrierEnter and BarrierLeave (the queue and
// barrier series of zkbench -scale).

// QueueTake takes with a queue.Queue of its own, so its first Take lists
// the queue (the cached listing then serves the next items).
func (d *zkrecipesDriver) QueueTake(ctx context.Context, path string, n int) (time.Duration, error) {
	q, err := queue.New(d.ss[0], path)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	for i := range n {
		if _, err := q.Take(ctx); err != nil {
			return 0, fmt.Errorf("take %d of %d: %w", i+1, n, err)
		}
	}
	return time.Since(t0), nil
}

// together runs f(i) for i in 0..n-1, each on its own goroutine, released
// at once, and returns the time from the release to the last return.
func together(n int, f func(i int) error) (time.Duration, error) {
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = f(i)
		})
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	return time.Since(t0), errors.Join(errs...)
}

func (d *zkrecipesDriver) BarrierEnter(ctx context.Context, path string, n, k int) (time.Duration, error) {
	if err := d.Open(ctx, k); err != nil {
		return 0, err
	}
	ms := make([]*barrier.DoubleBarrier, n)
	for i := range ms {
		m, err := barrier.NewDouble(d.ss[i%k], path, n)
		if err != nil {
			return 0, err
		}
		ms[i] = m
	}
	d.members = ms
	return together(n, func(i int) error { return ms[i].Enter(ctx) })
}

func (d *zkrecipesDriver) BarrierLeave(ctx context.Context) (time.Duration, error) {
	ms := d.members
	d.members = nil
	if len(ms) == 0 {
		return 0, errors.New("bench: no barrier entered")
	}
	return together(len(ms), func(i int) error { return ms[i].Leave(ctx) })
}

func (d *gozkDriver) QueueTake(context.Context, string, int) (time.Duration, error) {
	return 0, ErrUnsupported
}

// BarrierEnter: go-zookeeper has no barrier recipe.
func (d *gozkDriver) BarrierEnter(context.Context, string, int, int) (time.Duration, error) {
	return 0, ErrUnsupported
}

func (d *gozkDriver) BarrierLeave(context.Context) (time.Duration, error) { return 0, ErrUnsupported }

// peerGrace is how long, past ctx's deadline, a peer command that gives up
// by itself at that deadline is waited for: it may first have to close
// and reopen a client. Its answer must be read, or it would be taken for
// the next command's.
const peerGrace = 30 * time.Second

// graced returns a context for waiting on a peer that stops at ctx's
// deadline: the deadline plus peerGrace, but cancelled with ctx when ctx
// is cancelled rather than timed out.
func graced(ctx context.Context) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	g, cancel := context.WithDeadline(context.WithoutCancel(ctx), dl.Add(peerGrace))
	stop := context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.Canceled) {
			cancel()
		}
	})
	return g, func() { stop(); cancel() }
}

func (d *peerDriver) QueueTake(ctx context.Context, path string, n int) (time.Duration, error) {
	ms := msLeft(ctx)
	g, cancel := graced(ctx)
	defer cancel()
	return d.elapsed(g, "qtake %s %d %d", path, n, ms)
}

func (d *peerDriver) BarrierEnter(ctx context.Context, path string, n, k int) (time.Duration, error) {
	if err := d.Open(ctx, k); err != nil {
		return 0, err
	}
	ms := msLeft(ctx)
	g, cancel := graced(ctx)
	defer cancel()
	return d.elapsed(g, "dbarrier-enter %s %d %d %d", path, n, k, ms)
}

func (d *peerDriver) BarrierLeave(ctx context.Context) (time.Duration, error) {
	ms := msLeft(ctx)
	g, cancel := graced(ctx)
	defer cancel()
	return d.elapsed(g, "dbarrier-leave %d", ms)
}
