package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/barrier"
	"github.com/zkrecipes/zkrecipes/cache"
	"github.com/zkrecipes/zkrecipes/leader"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/rwlock"
	"github.com/zkrecipes/zkrecipes/shared"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// loop runs one goroutine per client, started together, each repeating
// step until d has passed, but at least once (so that each client takes
// part, however late it starts); it returns the steps done and the time
// until the last goroutine stopped.
func loop(ctx context.Context, clients int, d time.Duration, step func(ctx context.Context, i, j int) error) (int, time.Duration, error) {
	var ops atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, clients)
	start := make(chan struct{})
	t0 := time.Now()
	deadline := t0.Add(d)
	for i := range clients {
		wg.Go(func() {
			<-start
			for j := 0; j == 0 || time.Now().Before(deadline); j++ {
				if err := step(ctx, i, j); err != nil {
					errs[i] = err
					return
				}
				ops.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	return int(ops.Load()), time.Since(t0), errors.Join(errs...)
}

// takeAll runs one consumer per client until n items were taken in all.
func takeAll(ctx context.Context, clients, n int, take func(ctx context.Context, i int) error) (time.Duration, error) {
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	errs := make([]error, clients)
	t0 := time.Now()
	for i := range clients {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if err := take(ctx, i); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(t0), errors.Join(errs...)
}

// campaign tracks one in-process election participant: a goroutine that
// blocks until it leads, then records Now().
type campaign struct {
	done    chan struct{}
	at      atomic.Int64
	err     error
	release func(context.Context) error
}

func startCampaign(acquire func() (func(context.Context) error, error)) *campaign {
	c := &campaign{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.release, c.err = acquire()
		c.at.Store(Now())
	}()
	return c
}

func (c *campaign) wait(ctx context.Context, after int64) (int64, error) {
	if c == nil {
		return 0, errors.New("bench: no election started")
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		return 0, context.Cause(ctx)
	}
	if c.err != nil {
		return 0, c.err
	}
	if t := c.at.Load(); t > after {
		return t, nil
	}
	return 0, errors.New("bench: led before the time asked for")
}

func (c *campaign) resign(ctx context.Context) (int64, error) {
	if c == nil {
		return 0, errors.New("bench: no election started")
	}
	select {
	case <-c.done:
	default:
		return 0, errors.New("bench: resign before leading")
	}
	if c.err != nil {
		return 0, c.err
	}
	t := Now()
	return t, c.release(ctx)
}

// --- zkrecipes ---

// zkrecipes' queue spreads with queue.WithSpread: its rows queue-take-K-spread.
var _ SpreadTaker = (*zkrecipesDriver)(nil)

type zkrecipesDriver struct {
	addrs   []string
	timeout time.Duration
	ss      []*recipes.Session
	elect   *campaign
	tree    *treeWatch
	members []*barrier.DoubleBarrier // of the last BarrierEnter
	group   *electGroup              // participants of ElectJoin
}

// NewZkrecipes is the DriverFactory of zkrecipes: lock.Mutex,
// rwlock.RWMutex, queue.Queue, leader.Election, shared.Long,
// lock.MultiMutex and cache.TreeCache, defaults throughout (but the Long's
// attempts, see Increments).
func NewZkrecipes(ctx context.Context, connect string, sessionTimeout time.Duration) (Driver, error) {
	d := &zkrecipesDriver{addrs: strings.Split(connect, ","), timeout: sessionTimeout}
	if err := d.Open(ctx, 1); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *zkrecipesDriver) Open(ctx context.Context, n int) error {
	for len(d.ss) < n {
		s, err := recipes.Connect(ctx, d.addrs, recipes.WithSessionTimeout(d.timeout),
			recipes.WithLogger(slog.New(slog.DiscardHandler)), recipes.WithEnsembleTiming(testenv.DefaultTickTime, testenv.SyncLimit))
		if err != nil {
			return fmt.Errorf("bench: zkrecipes connect: %w", err)
		}
		d.ss = append(d.ss, s)
	}
	return nil
}

func (d *zkrecipesDriver) SessionID() int64 { return d.ss[0].ID() }

func (d *zkrecipesDriver) RoundTrip(ctx context.Context, path string, n int) ([]time.Duration, error) {
	return roundTrips(ctx, d.ss[0].Conn(), path, n)
}

// roundTrips times n setData requests for path on c, one at a time.
func roundTrips(ctx context.Context, c *zk.Conn, path string, n int) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	for range n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t0 := time.Now()
		if _, err := c.Set(path, nil, -1); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
	}
	return out, nil
}

func (d *zkrecipesDriver) Uncontended(ctx context.Context, path string, n int) ([]time.Duration, error) {
	m, err := lock.New(d.ss[0], path)
	if err != nil {
		return nil, err
	}
	out := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if err := m.Lock(ctx); err != nil {
			return nil, err
		}
		if err := m.Unlock(ctx); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
	}
	return out, nil
}

func (d *zkrecipesDriver) Contend(ctx context.Context, path string, dur time.Duration, k int) (int, time.Duration, error) {
	if err := d.Open(ctx, k); err != nil {
		return 0, 0, err
	}
	ms := make([]*lock.Mutex, k)
	for i, s := range d.ss[:k] {
		m, err := lock.New(s, path)
		if err != nil {
			return 0, 0, err
		}
		ms[i] = m
	}
	return loop(ctx, len(ms), dur, func(ctx context.Context, i, _ int) error {
		if err := ms[i].Lock(ctx); err != nil {
			return err
		}
		return ms[i].Unlock(ctx)
	})
}

func (d *zkrecipesDriver) RWMix(ctx context.Context, path string, dur time.Duration, every, k int) (int, time.Duration, error) {
	if err := d.Open(ctx, k); err != nil {
		return 0, 0, err
	}
	ms := make([]*rwlock.RWMutex, k)
	for i, s := range d.ss[:k] {
		m, err := rwlock.New(s, path)
		if err != nil {
			return 0, 0, err
		}
		ms[i] = m
	}
	return loop(ctx, len(ms), dur, func(ctx context.Context, i, j int) error {
		m := ms[i]
		if (i+j)%every == 0 {
			if err := m.Lock(ctx); err != nil {
				return err
			}
			return m.Unlock(ctx)
		}
		if err := m.Reader().Lock(ctx); err != nil {
			return err
		}
		return m.Reader().Unlock(ctx)
	})
}

// Increments uses shared.Long (Curator's DistributedAtomicLong layout)
// without promotion and with attempts enough never to give up, so each
// Increment is the compare-and-set loop itself.
func (d *zkrecipesDriver) Increments(ctx context.Context, path string, dur time.Duration, k int) (int, time.Duration, error) {
	if err := d.Open(ctx, k); err != nil {
		return 0, 0, err
	}
	ls := make([]*shared.Long, k)
	for i, s := range d.ss[:k] {
		l, err := shared.NewLong(s, path, shared.WithAttempts(math.MaxInt32))
		if err != nil {
			return 0, 0, err
		}
		ls[i] = l
	}
	return loop(ctx, len(ls), dur, func(ctx context.Context, i, _ int) error {
		r, err := ls[i].Increment(ctx)
		if err == nil && !r.Succeeded {
			err = fmt.Errorf("bench: increment of %s gave up", path)
		}
		return err
	})
}

func (d *zkrecipesDriver) MultiUncontended(ctx context.Context, paths []string, n int) ([]time.Duration, error) {
	m, err := lock.NewMulti(d.ss[0], paths)
	if err != nil {
		return nil, err
	}
	out := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if err := m.Lock(ctx); err != nil {
			return nil, err
		}
		if err := m.Unlock(ctx); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
	}
	return out, nil
}

func (d *zkrecipesDriver) MultiContend(ctx context.Context, paths []string, dur time.Duration, k int) (int, time.Duration, error) {
	if err := d.Open(ctx, k); err != nil {
		return 0, 0, err
	}
	ms := make([]*lock.MultiMutex, k)
	for i, s := range d.ss[:k] {
		m, err := lock.NewMulti(s, paths)
		if err != nil {
			return 0, 0, err
		}
		ms[i] = m
	}
	return loop(ctx, len(ms), dur, func(ctx context.Context, i, _ int) error {
		if err := ms[i].Lock(ctx); err != nil {
			return err
		}
		return ms[i].Unlock(ctx)
	})
}

func (d *zkrecipesDriver) Put(ctx context.Context, path string, n int) (time.Duration, error) {
	q, err := queue.New(d.ss[0], path)
	if err != nil {
		return 0, err
	}
	item := make([]byte, 100)
	t0 := time.Now()
	for range n {
		if _, err := q.Put(ctx, item); err != nil {
			return 0, err
		}
	}
	return time.Since(t0), nil
}

func (d *zkrecipesDriver) Take(ctx context.Context, path string, n, k int) (time.Duration, error) {
	return d.take(ctx, path, n, k)
}

// TakeSpread is Take with queue.WithSpread on every consumer's Queue.
func (d *zkrecipesDriver) TakeSpread(ctx context.Context, path string, n, k int) (time.Duration, error) {
	return d.take(ctx, path, n, k, queue.WithSpread())
}

func (d *zkrecipesDriver) take(ctx context.Context, path string, n, k int, opts ...queue.Option) (time.Duration, error) {
	if err := d.Open(ctx, k); err != nil {
		return 0, err
	}
	qs := make([]*queue.Queue, k)
	for i, s := range d.ss[:k] {
		q, err := queue.New(s, path, opts...)
		if err != nil {
			return 0, err
		}
		qs[i] = q
	}
	return takeAll(ctx, len(qs), n, func(ctx context.Context, i int) error {
		_, err := qs[i].Take(ctx)
		return err
	})
}

func (d *zkrecipesDriver) ElectStart(ctx context.Context, path string) error {
	e, err := leader.New(d.ss[0], path)
	if err != nil {
		return err
	}
	d.elect = startCampaign(func() (func(context.Context) error, error) {
		t, err := e.Campaign(ctx)
		if err != nil {
			return nil, err
		}
		return t.Release, nil
	})
	return nil
}

func (d *zkrecipesDriver) WaitLeader(ctx context.Context, after int64) (int64, error) {
	return d.elect.wait(ctx, after)
}

func (d *zkrecipesDriver) Resign(ctx context.Context) (int64, error) {
	t, err := d.elect.resign(ctx)
	d.elect = nil
	return t, err
}

// WatchTree runs a cache.TreeCache on client 0 and reads its stream on a
// goroutine of its own, which notes each event and takes the next.
func (d *zkrecipesDriver) WatchTree(ctx context.Context, root string) (int, error) {
	if d.tree != nil {
		return 0, errors.New("bench: a tree cache runs already")
	}
	tc, err := cache.NewTreeCache(d.ss[0], root)
	if err != nil {
		return 0, err
	}
	events := tc.Watch(context.WithoutCancel(ctx))
	w := newTreeWatch(events.Stop)
	go func() {
		defer close(w.done)
		for e := range events.C {
			w.note(e)
		}
		w.mu.Lock()
		w.err = events.Err()
		w.mu.Unlock()
	}()
	d.tree = w
	return w.waitInit(ctx)
}

func (d *zkrecipesDriver) AwaitTree(ctx context.Context, want map[string]string) (TreeEvents, error) {
	if d.tree == nil {
		return TreeEvents{}, errors.New("bench: no tree cache runs")
	}
	return d.tree.await(ctx, want)
}

func (d *zkrecipesDriver) UnwatchTree(ctx context.Context) error {
	if d.tree == nil {
		return nil
	}
	err := d.tree.end(ctx)
	d.tree = nil
	return err
}

func (d *zkrecipesDriver) Close(ctx context.Context) error {
	var errs []error
	errs = append(errs, d.UnwatchTree(ctx))
	if d.group != nil {
		errs = append(errs, d.group.stop(ctx))
		d.group = nil
	}
	for _, s := range d.ss {
		errs = append(errs, s.CloseContext(ctx))
	}
	d.ss = nil
	return errors.Join(errs...)
}

// --- go-zookeeper ---

type gozkDriver struct {
	addrs   []string
	timeout time.Duration
	conns   []*zk.Conn
	elect   *campaign
}

// NewGoZK is the DriverFactory of go-zookeeper's own zk.Lock (also used as
// the election: the library has no other recipe).
func NewGoZK(ctx context.Context, connect string, sessionTimeout time.Duration) (Driver, error) {
	d := &gozkDriver{addrs: strings.Split(connect, ","), timeout: sessionTimeout}
	if err := d.Open(ctx, 1); err != nil {
		return nil, err
	}
	return d, nil
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

func (d *gozkDriver) Open(ctx context.Context, n int) error {
	for len(d.conns) < n {
		c, ev, err := zk.Connect(d.addrs, d.timeout, zk.WithLogger(nopLogger{}), zk.WithLogInfo(false))
		if err != nil {
			return fmt.Errorf("bench: go-zookeeper connect: %w", err)
		}
		d.conns = append(d.conns, c)
		connected := make(chan struct{})
		go func() { // drain the event channel for the connection's life
			once := sync.OnceFunc(func() { close(connected) })
			for e := range ev {
				if e.State == zk.StateHasSession {
					once()
				}
			}
		}()
		select {
		case <-connected:
		case <-ctx.Done():
			return fmt.Errorf("bench: go-zookeeper connect: %w", context.Cause(ctx))
		}
	}
	return nil
}

func (d *gozkDriver) SessionID() int64 { return d.conns[0].SessionID() }

func (d *gozkDriver) newLock(i int, path string) *zk.Lock {
	return zk.NewLock(d.conns[i], path, zk.WorldACL(zk.PermAll))
}

func (d *gozkDriver) RoundTrip(ctx context.Context, path string, n int) ([]time.Duration, error) {
	return roundTrips(ctx, d.conns[0], path, n)
}

func (d *gozkDriver) Uncontended(ctx context.Context, path string, n int) ([]time.Duration, error) {
	l := d.newLock(0, path)
	out := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if err := l.Lock(); err != nil {
			return nil, err
		}
		if err := l.Unlock(); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
	}
	return out, nil
}

func (d *gozkDriver) Contend(ctx context.Context, path string, dur time.Duration, k int) (int, time.Duration, error) {
	if err := d.Open(ctx, k); err != nil {
		return 0, 0, err
	}
	ls := make([]*zk.Lock, k)
	for i := range ls {
		ls[i] = d.newLock(i, path)
	}
	return loop(ctx, len(ls), dur, func(_ context.Context, i, _ int) error {
		if err := ls[i].Lock(); err != nil {
			return err
		}
		return ls[i].Unlock()
	})
}

func (d *gozkDriver) RWMix(context.Context, string, time.Duration, int, int) (int, time.Duration, error) {
	return 0, 0, ErrUnsupported
}

// Increments: go-zookeeper has no counter recipe (a versioned-set loop
// written here would measure this package, not the library).
func (d *gozkDriver) Increments(context.Context, string, time.Duration, int) (int, time.Duration, error) {
	return 0, 0, ErrUnsupported
}

func (d *gozkDriver) MultiUncontended(context.Context, []string, int) ([]time.Duration, error) {
	return nil, ErrUnsupported
}

func (d *gozkDriver) MultiContend(context.Context, []string, time.Duration, int) (int, time.Duration, error) {
	return 0, 0, ErrUnsupported
}

func (d *gozkDriver) Put(context.Context, string, int) (time.Duration, error) {
	return 0, ErrUnsupported
}

func (d *gozkDriver) Take(context.Context, string, int, int) (time.Duration, error) {
	return 0, ErrUnsupported
}

// WatchTree: go-zookeeper has no cache recipe, only one-shot watches.
func (d *gozkDriver) WatchTree(context.Context, string) (int, error) { return 0, ErrUnsupported }

func (d *gozkDriver) AwaitTree(context.Context, map[string]string) (TreeEvents, error) {
	return TreeEvents{}, ErrUnsupported
}

func (d *gozkDriver) UnwatchTree(context.Context) error { return nil }

func (d *gozkDriver) ElectStart(_ context.Context, path string) error {
	l := d.newLock(0, path)
	d.elect = startCampaign(func() (func(context.Context) error, error) {
		if err := l.Lock(); err != nil {
			return nil, err
		}
		return func(context.Context) error { return l.Unlock() }, nil
	})
	return nil
}

func (d *gozkDriver) WaitLeader(ctx context.Context, after int64) (int64, error) {
	return d.elect.wait(ctx, after)
}

func (d *gozkDriver) Resign(ctx context.Context) (int64, error) {
	t, err := d.elect.resign(ctx)
	d.elect = nil
	return t, err
}

func (d *gozkDriver) Close(context.Context) error {
	for _, c := range d.conns {
		c.Close()
	}
	d.conns = nil
	return nil
}
