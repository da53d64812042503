package scale

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/lab/bench"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// The holdings series: one process, one ZooKeeper session, N distinct lock
// paths held at once. What an idle holding costs the process (goroutines,
// heap) and the server (watches), what acquiring N costs, and how long the
// process takes to notice that every holding may be lost once its link is
// partitioned. zkrecipes' lock.Mutex on one recipes.Session, beside
// go-zookeeper's zk.Lock on one *zk.Conn (it has no loss notice). Curator
// and kazoo are other processes whose memory and goroutines (threads) are
// not comparable with this process's counts: they are left out.

func init() {
	register(Series{Name: "holdings", Share: 0.2, Run: runHoldings})
	implColor[curveWithContext] = "#86b8de"
}

// curveWithContext names the zkrecipes curve measured after Context() was
// asked of every holding (which arms the holding's node watch).
const curveWithContext = "zkrecipes+Context"

// holdingSizes is the ladder of holdings per process; Quick takes the first
// two.
var holdingSizes = []int{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000}

// inFlight bounds the acquisitions (and setup requests) run at once: many
// goroutines calling Lock together, so that 10,000 creates do not take
// 10,000 round trips end to end.
const inFlight = 64

// holdRun is one implementation's points, and the note saying where it
// stopped.
type holdRun struct {
	impl   string
	points []holdPoint
	note   string
}

// discardLogger silences the measured sessions.
var discardLogger = slog.New(slog.DiscardHandler)

// holdPoint is one size's measurements.
type holdPoint struct {
	n int
	// held: after Lock returned for every holding; ctx: after Context()
	// was asked of each too and the server shows their watches.
	held, ctx memDelta
	// wall is the time to acquire all n with up to inFlight at once;
	// meanLat the mean time of one Lock call among them.
	wall, meanLat time.Duration
	// first and last: from the partition to the first and to the last
	// holding's Context done; noticed of n did within the wait.
	first, last time.Duration
	noticed     int
	// took is the size's whole time, setup and cleanup included.
	took time.Duration
}

// memDelta is what the process and the servers hold more than at the
// baseline, per holding.
type memDelta struct {
	goroutines float64
	total      float64 // the process's goroutines after (not per holding)
	heap       float64 // HeapAlloc bytes after a GC
	stack      float64 // StackInuse bytes (goroutine stacks: not in HeapAlloc)
	watches    float64 // the servers' total watches (wchs); NaN when unknown
}

// snapshot is the process's and the servers' state at one moment.
type snapshot struct {
	goroutines int
	heap       uint64
	stack      uint64
	watches    int // -1 when a server did not answer wchs
}

// takeSnapshot reads the servers' watch count, waits until the number of
// goroutines stops changing (the workers that just finished are gone),
// collects garbage twice (sync.Pool contents survive one collection, and
// the four-letter words' connections leave some there) and reads the heap.
func takeSnapshot(ctx context.Context, addrs []string) snapshot {
	w, err := serverWatches(ctx, addrs)
	if err != nil {
		w = -1
	}
	g := settleGoroutines(ctx)
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return snapshot{goroutines: g, heap: ms.HeapAlloc, stack: ms.StackInuse, watches: w}
}

// per returns (after-before)/n of each figure.
func per(before, after snapshot, n int) memDelta {
	d := memDelta{
		goroutines: float64(after.goroutines-before.goroutines) / float64(n),
		total:      float64(after.goroutines),
		heap:       (float64(after.heap) - float64(before.heap)) / float64(n),
		stack:      (float64(after.stack) - float64(before.stack)) / float64(n),
		watches:    math.NaN(),
	}
	if before.watches >= 0 && after.watches >= 0 {
		d.watches = float64(after.watches-before.watches) / float64(n)
	}
	return d
}

// settleGoroutines polls runtime.NumGoroutine until it has not changed for
// five polls in a row (goroutines that were ending have ended), or for 3 s,
// and returns the last count.
func settleGoroutines(ctx context.Context) int {
	deadline := time.Now().Add(3 * time.Second)
	last, same := runtime.NumGoroutine(), 0
	for same < 5 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
		g := runtime.NumGoroutine()
		if g == last {
			same++
		} else {
			last, same = g, 0
		}
	}
	return last
}

var totalWatchesRE = regexp.MustCompile(`Total watches:\s*(\d+)`)

// serverWatches sums the watches every server reports (four-letter word
// wchs: one per path and kind per connection).
func serverWatches(ctx context.Context, addrs []string) (int, error) {
	total := 0
	for _, a := range addrs {
		out, err := testenv.FourLetter(ctx, a, "wchs")
		if err != nil {
			return 0, err
		}
		m := totalWatchesRE.FindStringSubmatch(out)
		if m == nil {
			return 0, fmt.Errorf("scale: wchs answer %q", out)
		}
		n, _ := strconv.Atoi(m[1])
		total += n
	}
	return total, nil
}

// awaitWatches polls the servers' watch count until it is at least want
// and then unchanged for three polls, or until timeout; it returns the
// last count (-1 if the servers never answered).
func awaitWatches(ctx context.Context, addrs []string, want int, timeout time.Duration) int {
	deadline := time.Now().Add(timeout)
	last, same := -1, 0
	for time.Now().Before(deadline) && ctx.Err() == nil {
		w, err := serverWatches(ctx, addrs)
		if err == nil {
			if w == last && w >= want {
				same++
				if same >= 3 {
					return w
				}
			} else {
				same = 0
			}
			last = w
		}
		time.Sleep(20 * time.Millisecond)
	}
	return last
}

// pipeline runs fn(i) for i in [0, n) on up to width goroutines at once and
// returns the wall time and the mean time of one call. The first error
// stops the remaining calls.
func pipeline(ctx context.Context, n, width int, fn func(ctx context.Context, i int) error) (wall, mean time.Duration, err error) {
	if n == 0 {
		return 0, 0, nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next, sum atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range min(n, width) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				t := time.Now()
				if err := fn(ctx, i); err != nil {
					cancel(err)
					return
				}
				sum.Add(int64(time.Since(t)))
			}
		}()
	}
	wg.Wait()
	wall = time.Since(start)
	if err := context.Cause(ctx); err != nil {
		return wall, 0, err
	}
	return wall, time.Duration(sum.Load() / int64(n)), nil
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// connectZK opens a go-zookeeper connection and waits for its session; its
// event channel is drained until the connection closes.
func connectZK(ctx context.Context, addrs []string, timeout time.Duration) (*zk.Conn, error) {
	c, ev, err := zk.Connect(addrs, timeout, zk.WithLogger(nopLogger{}), zk.WithLogInfo(false))
	if err != nil {
		return nil, err
	}
	connected := make(chan struct{})
	go func() {
		once := false
		for e := range ev {
			if e.State == zk.StateHasSession && !once {
				close(connected)
				once = true
			}
		}
	}()
	select {
	case <-connected:
		return c, nil
	case <-ctx.Done():
		c.Close()
		return nil, context.Cause(ctx)
	}
}

// createNodes creates the given paths (parents first, as listed) as
// persistent nodes with no data, in multis of 500. An existing node is an
// error.
func createNodes(ctx context.Context, c *zk.Conn, paths []string) error {
	for i := 0; i < len(paths); i += 500 {
		if err := ctx.Err(); err != nil {
			return err
		}
		var ops []any
		for _, p := range paths[i:min(i+500, len(paths))] {
			ops = append(ops, &zk.CreateRequest{Path: p, Acl: zk.WorldACL(zk.PermAll)})
		}
		if _, err := c.Multi(ops...); err != nil {
			return fmt.Errorf("scale: create %d nodes from %s: %w", len(ops), paths[i], err)
		}
	}
	return nil
}

// ensurePath creates every missing level of path.
func ensurePath(c *zk.Conn, path string) error {
	for i := 1; i <= len(path); i++ {
		if i == len(path) || path[i] == '/' {
			_, err := c.Create(path[:i], nil, 0, zk.WorldACL(zk.PermAll))
			if err != nil && !errors.Is(err, zk.ErrNodeExists) {
				return fmt.Errorf("scale: create %s: %w", path[:i], err)
			}
		}
	}
	return nil
}

// deleteTree deletes path and everything below it (ephemeral nodes of other
// sessions included), up to inFlight deletes at once. Nodes that are
// already gone are fine.
func deleteTree(ctx context.Context, c *zk.Conn, path string) error {
	kids, _, err := c.Children(path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	_, _, err = pipeline(ctx, len(kids), inFlight, func(ctx context.Context, i int) error {
		return deleteTree(ctx, c, path+"/"+kids[i])
	})
	if err != nil {
		return err
	}
	if err := c.Delete(path, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	return nil
}

// planner decides whether the next size fits the time left: a size is
// taken to cost a fixed part (the smallest size's time) plus a part
// proportional to its size, with a third more as margin.
type planner struct {
	deadline time.Time
	fixed    time.Duration // the smallest size's time
}

// fits reports whether size next is expected to end before the deadline,
// given that size cur took took, and the estimate.
func (p *planner) fits(cur int, took time.Duration, next int) (bool, time.Duration) {
	if p.fixed == 0 || took < p.fixed {
		p.fixed = took
	}
	est := p.fixed + time.Duration(float64(took-p.fixed)*float64(next)/float64(cur)*4/3)
	return time.Until(p.deadline) > est, est
}

// lockPaths returns base/l0 .. base/l(n-1).
func lockPaths(base string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s/l%d", base, i)
	}
	return out
}

func runHoldings(ctx context.Context, env *Env) ([]Figure, error) {
	sizes := holdingSizes
	if env.Quick {
		sizes = sizes[:2]
	}
	admin, err := connectZK(ctx, env.Ensemble.DirectAddrs(), env.SessionTimeout)
	if err != nil {
		return nil, fmt.Errorf("holdings: admin: %w", err)
	}
	defer admin.Close()
	if err := ensurePath(admin, "/scale/holdings"); err != nil {
		return nil, err
	}
	start := time.Now()
	var runs []holdRun
	var errs []error
	share := map[string]float64{bench.ImplZkrecipes: 0.75, bench.ImplGoZK: 1}
	for _, impl := range []string{bench.ImplZkrecipes, bench.ImplGoZK} {
		if !contains(env.Impls, impl) {
			continue
		}
		p := &planner{deadline: start.Add(time.Duration(float64(env.Budget) * share[impl]))}
		r := holdRun{impl: impl}
		for k, n := range sizes {
			t := time.Now()
			pt, err := holdOnce(ctx, env, admin, impl, n)
			pt.took = time.Since(t) // with the cleanup
			if err != nil {
				errs = append(errs, fmt.Errorf("holdings: %s at %d: %w", impl, n, err))
				r.note = fmt.Sprintf("stopped at %d holdings: %v", n, err)
				break
			}
			r.points = append(r.points, pt)
			env.Logf("scale: holdings %s n=%d: %.2f goroutines, %.0f B heap, %.2f watches per holding (%.2f, %.0f B, %.2f with Context); acquire %v wall, %v per call; loss first %v last %v (%d/%d); took %v",
				impl, n, pt.held.goroutines, pt.held.heap, pt.held.watches, pt.ctx.goroutines, pt.ctx.heap, pt.ctx.watches,
				pt.wall.Round(time.Millisecond), pt.meanLat.Round(10*time.Microsecond), pt.first.Round(time.Millisecond), pt.last.Round(time.Millisecond), pt.noticed, n, pt.took.Round(time.Millisecond))
			if k+1 < len(sizes) {
				if ok, est := p.fits(n, pt.took, sizes[k+1]); !ok {
					r.note = fmt.Sprintf("stopped at %d holdings: %d would take about %v, beyond the series' budget (%v)",
						n, sizes[k+1], est.Round(time.Second), env.Budget.Round(time.Second))
					break
				}
			}
		}
		runs = append(runs, r)
	}

	figs := []Figure{
		{Name: "holdings-goroutines", Title: "Goroutines in the process vs held locks, one session", XLabel: "holdings per process", YLabel: "goroutines in the process"},
		{Name: "holdings-heap", Title: "Heap bytes per held lock, one session", XLabel: "holdings per process", YLabel: "bytes per holding"},
		{Name: "holdings-watches", Title: "Server watches per held lock, one session", XLabel: "holdings per process", YLabel: "watches per holding"},
		{Name: "holdings-acquire", Title: "Acquire time per holding (64 Lock calls in flight)", XLabel: "holdings per process", YLabel: "ms per holding (wall / N)"},
		{Name: "holdings-acquire-latency", Title: "Mean time of one Lock call (64 in flight)", XLabel: "holdings per process", YLabel: "ms per Lock call"},
		{Name: "holdings-loss-last", Title: "Partition to the last holding's Context done", XLabel: "holdings per process", YLabel: "ms"},
		{Name: "holdings-loss-spread", Title: "First to last holding's Context done after a partition", XLabel: "holdings per process", YLabel: "ms"},
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	for _, r := range runs {
		held := Curve{Impl: r.impl, Note: r.note}
		withCtx := Curve{Impl: curveWithContext, Note: r.note}
		heap, heapCtx := held, withCtx
		watches, watchesCtx := held, withCtx
		acq, lat, last, spread := held, held, held, held
		for _, pt := range r.points {
			x := float64(pt.n)
			held.Points = append(held.Points, Point{x, pt.held.total})
			heap.Points = append(heap.Points, Point{x, pt.held.heap})
			if !math.IsNaN(pt.held.watches) {
				watches.Points = append(watches.Points, Point{x, pt.held.watches})
			}
			acq.Points = append(acq.Points, Point{x, ms(pt.wall) / x})
			lat.Points = append(lat.Points, Point{x, ms(pt.meanLat)})
			if r.impl == bench.ImplZkrecipes {
				withCtx.Points = append(withCtx.Points, Point{x, pt.ctx.total})
				heapCtx.Points = append(heapCtx.Points, Point{x, pt.ctx.heap})
				if !math.IsNaN(pt.ctx.watches) {
					watchesCtx.Points = append(watchesCtx.Points, Point{x, pt.ctx.watches})
				}
				if pt.noticed == pt.n {
					last.Points = append(last.Points, Point{x, ms(pt.last)})
					spread.Points = append(spread.Points, Point{x, ms(pt.last - pt.first)})
				} else {
					last.Note += fmt.Sprintf(" At %d holdings only %d Contexts were done %v after the partition.", pt.n, pt.noticed, pt.last.Round(time.Millisecond))
				}
			}
		}
		figs[0].Curves = append(figs[0].Curves, held)
		figs[1].Curves = append(figs[1].Curves, heap)
		figs[2].Curves = append(figs[2].Curves, watches)
		figs[3].Curves = append(figs[3].Curves, acq)
		figs[4].Curves = append(figs[4].Curves, lat)
		if r.impl == bench.ImplZkrecipes {
			figs[0].Curves = append(figs[0].Curves, withCtx)
			figs[1].Curves = append(figs[1].Curves, heapCtx)
			figs[2].Curves = append(figs[2].Curves, watchesCtx)
			figs[5].Curves = append(figs[5].Curves, last)
			figs[6].Curves = append(figs[6].Curves, spread)
		}
	}
	common := "One process, one ZooKeeper session (zkrecipes: one recipes.Session; go-zookeeper: one *zk.Conn), N distinct lock paths (parents created beforehand), each held by its own lock.Mutex or zk.Lock; acquired with up to 64 Lock calls in flight. " +
		"Curator and kazoo run in other processes (a JVM, CPython) whose memory and threads are not comparable with this process's counts: they are left out of this series."
	figs[0].Notes = []string{common,
		"runtime.NumGoroutine() once every Lock returned (and the workers ended), minus the count before, over N. " + curveWithContext + ": after Context() was also asked of every holding, which arms a data watch on the holding's node (lock.Mutex.Context). Zeros are not drawn on the log scale (see the table).",
		"The goal: an idle holding needs no goroutine of its own (its node's watch fanned in by the Session)."}
	figs[1].Notes = []string{common,
		"runtime.MemStats.HeapAlloc after runtime.GC(), minus the same before the locks were made, over N: the lock objects, the holdings and whatever the session and go-zookeeper keep for them. Goroutine stacks are not in HeapAlloc: see the stack figures in the notes below."}
	figs[2].Notes = []string{common,
		"The servers' own count (four-letter word wchs, summed over the servers: one per path and kind per connection), minus the count before, over N. A lock held by lock.Mutex watches nothing until Context() is asked; zk.Lock never watches its own node. Zeros are not drawn."}
	figs[3].Notes = []string{common, "Wall time to acquire all N (up to 64 Lock calls at once; each Lock: 1 create + 1 getChildren, uncontended), over N: what pipelining buys."}
	figs[4].Notes = []string{common, "Mean duration of one Lock call while up to min(N, 64) run at once: what pipelining costs each call (queueing on the one connection and at the server)."}
	figs[5].Notes = []string{"zkrecipes only: go-zookeeper's zk.Lock has no notice of loss (no context, no state callback).",
		"The session's link (a testenv Link of its own) is blackholed once every holding's Context() was asked; the time from the blackhole to the last Context done. Under the default loss policy (StepDownOnSuspend) holdings end when go-zookeeper gives the connection up (no frame for 2/3 of the session timeout), or at the lease deadline, whichever comes first: the level is set by the session timeout (" + env.SessionTimeout.String() + "); a rise with N would be the cost of noticing."}
	figs[6].Notes = []string{"zkrecipes only (see holdings-loss-last). The time between the first and the last holding's Context done: the cost of telling N holdings, which should grow no faster than N (a slope of 1 on this chart at most). " +
		"Each holding's cancellation runs context.AfterFunc callbacks, each on a goroutine of its own (the holding leaves the session's hooks and the lease's list; the benchmark notes the time), and wakes the holding's watch goroutine, all on a shared machine: single runs vary by a factor of two." + spreadPerHolding(runs)}
	figs[3].Notes = append(figs[3].Notes, "Each point is one run; below a hundred holdings a point is a handful of round trips, as noisy as the machine.")
	figs[4].Notes = append(figs[4].Notes, "Each point is one run; below a hundred holdings a point is a handful of round trips, as noisy as the machine.")
	for i := range figs {
		figs[i].Notes = append(figs[i].Notes, stackNote(runs))
	}
	if len(errs) > 0 {
		return figs, errors.Join(errs...)
	}
	return figs, nil
}

// spreadPerHolding gives the first-to-last spread per holding at the sizes
// from 1000 up.
func spreadPerHolding(runs []holdRun) string {
	s := ""
	for _, r := range runs {
		if r.impl != bench.ImplZkrecipes {
			continue
		}
		for _, pt := range r.points {
			if pt.n >= 1000 && pt.noticed == pt.n {
				s += fmt.Sprintf(" %.1f µs at %d;", float64(pt.last-pt.first)/float64(time.Microsecond)/float64(pt.n), pt.n)
			}
		}
	}
	if s == "" {
		return ""
	}
	return " Per holding:" + s
}

// stackNote gives the goroutine stack bytes per holding at the largest size
// of each implementation.
func stackNote(runs []holdRun) string {
	s := "Goroutine stacks (StackInuse, not in the heap figure) per holding at the largest size:"
	for _, r := range runs {
		if len(r.points) == 0 {
			continue
		}
		last := r.points[len(r.points)-1]
		s += fmt.Sprintf(" %s %.0f B held", r.impl, last.held.stack)
		if r.impl == bench.ImplZkrecipes {
			s += fmt.Sprintf(", %.0f B with Context", last.ctx.stack)
		}
		s += fmt.Sprintf(" (N=%d);", last.n)
	}
	return s
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// holdOnce measures one size for one implementation: parents created, a
// session (or connection) of its own through a link of its own, N locks
// acquired, counts taken, and for zkrecipes Context() asked of each, counts
// taken again, and the link blackholed until every Context is done.
func holdOnce(ctx context.Context, env *Env, admin *zk.Conn, impl string, n int) (holdPoint, error) {
	began := time.Now()
	pt := holdPoint{n: n}
	base := fmt.Sprintf("/scale/holdings/%s-%d-%d", impl, n, began.UnixNano())
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := deleteTree(dctx, admin, base); err != nil {
			env.Logf("scale: holdings: delete %s: %v", base, err)
		}
	}()
	paths := lockPaths(base, n)
	warm := base + "/warm" // one lock taken and released before the baseline
	if err := createNodes(ctx, admin, append([]string{base, warm}, paths...)); err != nil {
		return pt, err
	}
	link, err := env.Ensemble.NewLink("holdings")
	if err != nil {
		return pt, err
	}
	defer link.Close()
	addrs := env.Ensemble.DirectAddrs()

	if impl == bench.ImplGoZK {
		c, err := connectZK(ctx, link.Addrs(), env.SessionTimeout)
		if err != nil {
			return pt, err
		}
		defer c.Close()
		locks := make([]*zk.Lock, n) // the bench's own slice: before the baseline
		// Warm up: what the first lock of a connection allocates once.
		w := zk.NewLock(c, warm, zk.WorldACL(zk.PermAll))
		if err := w.Lock(); err != nil {
			return pt, err
		}
		if err := w.Unlock(); err != nil {
			return pt, err
		}
		before := takeSnapshot(ctx, addrs)
		for i := range locks {
			locks[i] = zk.NewLock(c, paths[i], zk.WorldACL(zk.PermAll))
		}
		pt.wall, pt.meanLat, err = pipeline(ctx, n, inFlight, func(_ context.Context, i int) error { return locks[i].Lock() })
		if err != nil {
			return pt, err
		}
		pt.held = per(before, takeSnapshot(ctx, addrs), n)
		pt.ctx = pt.held
		runtime.KeepAlive(locks)
		return pt, nil
	}

	s, err := recipes.Connect(ctx, link.Addrs(), recipes.WithSessionTimeout(env.SessionTimeout), recipes.WithLogger(discardLogger), recipes.WithEnsembleTiming(env.Ensemble.Timing()))
	if err != nil {
		return pt, err
	}
	defer func() {
		// The link may have been left in any state: reset it so the close
		// reaches the server.
		_ = link.Heal()
		_ = link.Cut()
		_ = link.Restore()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), env.SessionTimeout+2*time.Second)
		defer cancel()
		_ = s.CloseContext(cctx)
	}()
	// The bench's own slices come before the baseline.
	mus := make([]*lock.Mutex, n)
	ctxs := make([]context.Context, n)
	done := make([]atomic.Int64, n)
	// Warm up: what the first holding of a session allocates once (its
	// maps, the lease timer), Context's watch included.
	w, err := lock.New(s, warm)
	if err != nil {
		return pt, err
	}
	if err := w.Lock(ctx); err != nil {
		return pt, err
	}
	wctx := w.Context()
	if err := w.Unlock(ctx); err != nil {
		return pt, err
	}
	<-wctx.Done()
	before := takeSnapshot(ctx, addrs)
	for i := range mus {
		if mus[i], err = lock.New(s, paths[i]); err != nil {
			return pt, err
		}
	}
	pt.wall, pt.meanLat, err = pipeline(ctx, n, inFlight, func(ctx context.Context, i int) error { return mus[i].Lock(ctx) })
	if err != nil {
		return pt, err
	}
	pt.held = per(before, takeSnapshot(ctx, addrs), n)

	for i, m := range mus {
		ctxs[i] = m.Context()
	}
	if before.watches >= 0 {
		awaitWatches(ctx, addrs, before.watches+n, 10*time.Second+time.Duration(n)*time.Millisecond)
	}
	pt.ctx = per(before, takeSnapshot(ctx, addrs), n)
	for i, c := range ctxs {
		if c.Err() != nil {
			return pt, fmt.Errorf("holding %d done before the partition: %w", i, context.Cause(c))
		}
	}

	// Partition: every Context must end; note when each does.
	var left sync.WaitGroup
	left.Add(n)
	t0 := time.Now()
	for i, c := range ctxs {
		context.AfterFunc(c, func() {
			done[i].Store(int64(time.Since(t0)))
			left.Done()
		})
	}
	if err := link.Blackhole(); err != nil {
		return pt, err
	}
	all := make(chan struct{})
	go func() { left.Wait(); close(all) }()
	select {
	case <-all:
	case <-time.After(3*env.SessionTimeout + 10*time.Second):
	case <-ctx.Done():
		return pt, context.Cause(ctx)
	}
	pt.first = time.Duration(math.MaxInt64)
	for i := range done {
		d := time.Duration(done[i].Load())
		if d == 0 {
			continue
		}
		pt.noticed++
		pt.first = min(pt.first, d)
		pt.last = max(pt.last, d)
	}
	if pt.noticed < n {
		pt.last = time.Since(t0)
	}
	runtime.KeepAlive(mus)
	return pt, nil
}
