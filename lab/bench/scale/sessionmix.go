package scale

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/cache"
	"github.com/zkrecipes/zkrecipes/group"
	"github.com/zkrecipes/zkrecipes/lab/bench"
	"github.com/zkrecipes/zkrecipes/leader"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// The session series: one recipes.Session shared by N recipe instances of
// four kinds in equal numbers (instance i is of kind i mod 4): a held
// lock.Mutex, a leader.Election campaign that leads (its Term), a started
// cache.NodeCache, a group.Member. What an instance costs the process and
// the servers, and how long the process takes to notice the session's loss
// in every instance. zkrecipes only: go-zookeeper has a lock and nothing
// else, and Curator and kazoo are other processes (see holdings.go).

func init() {
	register(Series{Name: "session", Share: 0.1, Run: runSessionMix})
	for i, k := range mixKinds {
		implColor[k.curve] = mixColors[i]
	}
}

// sessionSizes is the ladder of instances per Session, multiples of 4 so
// that every kind has as many instances; Quick takes the first two.
var sessionSizes = []int{4, 8, 20, 40, 100, 200, 400, 1000}

// mixKind is one kind of recipe instance: its curve's name and what
// noticing the session's loss means for it.
type mixKind struct {
	name, curve, notice string
}

var mixKinds = []mixKind{
	{"lock", "zkrecipes lock", "lock.Mutex.Context() done"},
	{"election", "zkrecipes election", "leader.Term.Context() done"},
	{"nodecache", "zkrecipes nodecache", "cache.NodeCache delivered EventReset"},
	{"member", "zkrecipes member", "group.Member.Present() done"},
}

var mixColors = []string{"#1b9e77", "#d95f02", "#7570b3", "#e7298a"}

// mixPoint is one size's measurements.
type mixPoint struct {
	n int
	// all: per instance, over every kind; kind[k]: per instance of kind k.
	all  memDelta
	kind [4]memDelta
	// start is the time to start every instance (32 at once).
	start time.Duration
	// lastAll and last[k]: from the partition to the last notice of the
	// session's loss, over all instances and per kind; noticed of n did
	// within the wait.
	lastAll time.Duration
	last    [4]time.Duration
	noticed int
	took    time.Duration
}

func runSessionMix(ctx context.Context, env *Env) ([]Figure, error) {
	if !contains(env.Impls, bench.ImplZkrecipes) {
		return nil, nil
	}
	sizes := sessionSizes
	if env.Quick {
		sizes = sizes[:2]
	}
	admin, err := connectZK(ctx, env.Ensemble.DirectAddrs(), env.SessionTimeout)
	if err != nil {
		return nil, fmt.Errorf("session: admin: %w", err)
	}
	defer admin.Close()
	if err := ensurePath(admin, "/scale/session"); err != nil {
		return nil, err
	}
	p := &planner{deadline: time.Now().Add(env.Budget)}
	var points []mixPoint
	var note string
	var runErr error
	for k, n := range sizes {
		t := time.Now()
		pt, err := mixOnce(ctx, env, admin, n)
		pt.took = time.Since(t)
		if err != nil {
			runErr = fmt.Errorf("session: %d instances: %w", n, err)
			note = fmt.Sprintf("stopped at %d instances: %v", n, err)
			break
		}
		points = append(points, pt)
		env.Logf("scale: session n=%d: per instance %.2f goroutines, %.0f B heap, %.2f watches; start %v; loss last %v (%d/%d); took %v",
			n, pt.all.goroutines, pt.all.heap, pt.all.watches, pt.start.Round(time.Millisecond), pt.lastAll.Round(time.Millisecond), pt.noticed, n, pt.took.Round(time.Millisecond))
		if k+1 < len(sizes) {
			if ok, est := p.fits(n, pt.took, sizes[k+1]); !ok {
				note = fmt.Sprintf("stopped at %d instances: %d would take about %v, beyond the series' budget (%v)",
					n, sizes[k+1], est.Round(time.Second), env.Budget.Round(time.Second))
				break
			}
		}
	}

	figs := []Figure{
		{Name: "session-goroutines", Title: "Goroutines per recipe instance, one shared Session", XLabel: "instances per Session", YLabel: "goroutines per instance"},
		{Name: "session-heap", Title: "Heap bytes per recipe instance, one shared Session", XLabel: "instances per Session", YLabel: "bytes per instance"},
		{Name: "session-watches", Title: "Server watches per recipe instance, one shared Session", XLabel: "instances per Session", YLabel: "watches per instance"},
		{Name: "session-loss", Title: "Partition to the last instance noticing the session's loss", XLabel: "instances per Session", YLabel: "ms"},
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	get := []func(memDelta) float64{
		func(d memDelta) float64 { return d.goroutines },
		func(d memDelta) float64 { return d.heap },
		func(d memDelta) float64 { return d.watches },
	}
	for f := range 3 {
		all := Curve{Impl: bench.ImplZkrecipes, Note: note}
		kinds := make([]Curve, len(mixKinds))
		for _, pt := range points {
			x := float64(pt.n)
			if v := get[f](pt.all); !math.IsNaN(v) {
				all.Points = append(all.Points, Point{x, v})
			}
			for k := range mixKinds {
				if v := get[f](pt.kind[k]); !math.IsNaN(v) {
					kinds[k].Points = append(kinds[k].Points, Point{x, v})
				}
			}
		}
		figs[f].Curves = append(figs[f].Curves, all)
		for k, mk := range mixKinds {
			kinds[k].Impl = mk.curve
			figs[f].Curves = append(figs[f].Curves, kinds[k])
		}
	}
	loss := Curve{Impl: bench.ImplZkrecipes, Note: note}
	lossKinds := make([]Curve, len(mixKinds))
	for _, pt := range points {
		x := float64(pt.n)
		if pt.noticed < pt.n {
			loss.Note += fmt.Sprintf(" At %d instances only %d noticed within %v.", pt.n, pt.noticed, pt.lastAll.Round(time.Millisecond))
			continue
		}
		loss.Points = append(loss.Points, Point{x, ms(pt.lastAll)})
		for k := range mixKinds {
			lossKinds[k].Points = append(lossKinds[k].Points, Point{x, ms(pt.last[k])})
		}
	}
	figs[3].Curves = append(figs[3].Curves, loss)
	for k, mk := range mixKinds {
		lossKinds[k].Impl = mk.curve
		figs[3].Curves = append(figs[3].Curves, lossKinds[k])
	}

	common := "One recipes.Session (one go-zookeeper connection) shared by N instances, a quarter of each kind, each on a path of its own: a lock.Mutex held (Lock, then Context()), a leader.Election leading (Campaign, then its Term's Context()), a cache.NodeCache started and initialized on an existing node, a group.Member joined (group.Join). " +
		"The zkrecipes curve is per instance over the mix; the others per instance of one kind (the kinds are started one after the other and the counts taken after each). zkrecipes only: go-zookeeper has only a lock, and Curator and kazoo run in other processes whose memory is not comparable."
	figs[0].Notes = []string{common, "runtime.NumGoroutine() minus the count before, over N, not counting the one goroutine per NodeCache that the benchmark runs to read its event stream (as an application must). Zeros are not drawn."}
	figs[1].Notes = []string{common, "runtime.MemStats.HeapAlloc after runtime.GC(), minus the same before, over N (goroutine stacks are not in it)."}
	figs[2].Notes = []string{common, "The servers' count (wchs, summed over the servers) minus the count before, over N: each kind keeps one watch on its own node (a lock's and a term's data watch, the cache's data watch, a member's exists watch)."}
	figs[3].Notes = []string{common,
		"The Session's link is blackholed; the time until every instance noticed: " + kindNotices() + ". " +
			"Under the default loss policy a lock and a term end at the suspension (go-zookeeper gives the connection up after 2/3 of the session timeout without a frame) or at the lease deadline, whichever comes first; a cache and a member react to the session's loss, which the Session reports once a whole session timeout (" + env.SessionTimeout.String() + ") passed without an answer. The level is set by the timeout; a rise with N would be the cost of noticing."}
	if len(points) > 0 {
		last := points[len(points)-1]
		figs[1].Notes = append(figs[1].Notes, fmt.Sprintf("Goroutine stacks (StackInuse) per instance at %d instances: %.0f B.", last.n, last.all.stack))
		figs[0].Notes = append(figs[0].Notes, fmt.Sprintf("Starting all %d instances (32 at once) took %v.", last.n, last.start.Round(time.Millisecond)))
	}
	return figs, runErr
}

func kindNotices() string {
	s := ""
	for i, k := range mixKinds {
		if i > 0 {
			s += "; "
		}
		s += k.name + ": " + k.notice
	}
	return s
}

// mixOnce measures one size: nodes created, a Session through a link of
// its own, the instances started kind by kind with counts taken after each,
// then the link blackholed until every instance noticed the loss.
func mixOnce(ctx context.Context, env *Env, admin *zk.Conn, n int) (mixPoint, error) {
	pt := mixPoint{n: n}
	base := fmt.Sprintf("/scale/session/%d-%d", n, time.Now().UnixNano())
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := deleteTree(dctx, admin, base); err != nil {
			env.Logf("scale: session: delete %s: %v", base, err)
		}
	}()
	// Instance i's path: base/<kind>/<i>; the cache's node exists, the
	// other paths are parents (of the lock's, the election's and the
	// member's nodes).
	path := func(i int) string { return fmt.Sprintf("%s/%s/%d", base, mixKinds[i%4].name, i) }
	nodes := []string{base}
	for _, k := range mixKinds {
		nodes = append(nodes, base+"/"+k.name)
	}
	for i := range n {
		nodes = append(nodes, path(i))
	}
	if err := createNodes(ctx, admin, nodes); err != nil {
		return pt, err
	}
	link, err := env.Ensemble.NewLink("session")
	if err != nil {
		return pt, err
	}
	defer link.Close()
	addrs := env.Ensemble.DirectAddrs()
	s, err := recipes.Connect(ctx, link.Addrs(), recipes.WithSessionTimeout(env.SessionTimeout), recipes.WithLogger(discardLogger), recipes.WithEnsembleTiming(env.Ensemble.Timing()))
	if err != nil {
		return pt, err
	}
	cacheCtx, stopCaches := context.WithCancel(context.WithoutCancel(ctx))
	var readers sync.WaitGroup
	defer func() {
		stopCaches()
		_ = link.Heal()
		_ = link.Cut()
		_ = link.Restore()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), env.SessionTimeout+2*time.Second)
		defer cancel()
		_ = s.CloseContext(cctx)
		readers.Wait()
	}()

	// The bench's own bookkeeping, before the baseline.
	var (
		mus      = make([]*lock.Mutex, n)
		terms    = make([]*leader.Term, n)
		members  = make([]*group.Member, n)
		lossCtx  = make([]context.Context, n) // lock, term, member: done at the notice
		inited   = make([]chan struct{}, n)   // cache: closed at EventInitialized
		noticed  = make([]atomic.Int64, n)    // ns from the partition to the notice
		t0       atomic.Int64                 // the partition, UnixNano; 0 before
		left     sync.WaitGroup
		byKind   [4][]int
		nReaders int
	)
	for i := range n {
		byKind[i%4] = append(byKind[i%4], i)
		inited[i] = make(chan struct{})
	}
	left.Add(n)
	notice := func(i int) {
		if at := t0.Load(); at != 0 && noticed[i].CompareAndSwap(0, time.Now().UnixNano()-at) {
			left.Done()
		}
	}
	start := func(i int) error {
		switch i % 4 {
		case 0:
			m, err := lock.New(s, path(i))
			if err != nil {
				return err
			}
			if err := m.Lock(ctx); err != nil {
				return err
			}
			mus[i], lossCtx[i] = m, m.Context()
		case 1:
			e, err := leader.New(s, path(i))
			if err != nil {
				return err
			}
			t, err := e.Campaign(ctx)
			if err != nil {
				return err
			}
			terms[i], lossCtx[i] = t, t.Context()
		case 2:
			c, err := cache.NewNodeCache(s, path(i))
			if err != nil {
				return err
			}
			st := c.Watch(cacheCtx)
			readers.Add(1)
			go func() {
				defer readers.Done()
				for ev := range st.C {
					switch ev.Type {
					case cache.EventInitialized:
						select {
						case <-inited[i]:
						default:
							close(inited[i])
						}
					case cache.EventReset:
						notice(i)
					}
				}
			}()
			select {
			case <-inited[i]:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		case 3:
			m, err := group.Join(ctx, s, path(i), "m")
			if err != nil {
				return err
			}
			members[i], lossCtx[i] = m, m.Present()
		}
		return nil
	}

	snaps := []snapshot{takeSnapshot(ctx, addrs)}
	began := time.Now()
	for k := range mixKinds {
		idx := byKind[k]
		if _, _, err := pipeline(ctx, len(idx), 32, func(_ context.Context, j int) error { return start(idx[j]) }); err != nil {
			if k == 2 {
				stopCaches() // the readers of caches never started end with their streams
			}
			return pt, fmt.Errorf("%s: %w", mixKinds[k].name, err)
		}
		if k == 2 {
			nReaders = len(idx) // one per cache, all started
		}
		if prev := snaps[len(snaps)-1].watches; prev >= 0 {
			awaitWatches(ctx, addrs, prev+len(idx), 5*time.Second+time.Duration(len(idx))*time.Millisecond)
		}
		snaps = append(snaps, takeSnapshot(ctx, addrs))
	}
	pt.start = time.Since(began)
	for k := range mixKinds {
		pt.kind[k] = per(snaps[k], snaps[k+1], len(byKind[k]))
	}
	// The cache readers are the benchmark's, not the caches'.
	pt.kind[2].goroutines -= 1
	pt.all = per(snaps[0], snaps[4], n)
	pt.all.goroutines -= float64(nReaders) / float64(n)
	for i, c := range lossCtx {
		if c != nil && c.Err() != nil {
			return pt, fmt.Errorf("%s %d done before the partition: %w", mixKinds[i%4].name, i, context.Cause(c))
		}
	}

	// Partition.
	t0.Store(time.Now().UnixNano())
	for i, c := range lossCtx {
		if c != nil {
			context.AfterFunc(c, func() { notice(i) })
		}
	}
	if err := link.Blackhole(); err != nil {
		return pt, err
	}
	all := make(chan struct{})
	go func() { left.Wait(); close(all) }()
	wait := 3*env.SessionTimeout + 10*time.Second
	select {
	case <-all:
	case <-time.After(wait):
	case <-ctx.Done():
		return pt, context.Cause(ctx)
	}
	for i := range noticed {
		d := time.Duration(noticed[i].Load())
		if d == 0 {
			continue
		}
		pt.noticed++
		pt.last[i%4] = max(pt.last[i%4], d)
		pt.lastAll = max(pt.lastAll, d)
	}
	if pt.noticed < n {
		pt.lastAll = wait
		// Unblock the waiter once the close cancels the rest.
		go func() {
			for i := range noticed {
				if noticed[i].Load() == 0 && noticed[i].CompareAndSwap(0, -1) {
					left.Done()
				}
			}
		}()
	}
	runtime.KeepAlive(mus)
	runtime.KeepAlive(terms)
	runtime.KeepAlive(members)
	return pt, nil
}
