package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/shared"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// Workload groups, as selected on the command line.
const (
	WUncontended = "uncontended"
	// WRoundTrip is the row the uncontended group measures first: one raw
	// write (setData), the unit of every latency row.
	WRoundTrip = "write-round-trip"
	WContended = "contended"
	WLeader    = "leader"
	WQueue     = "queue"
	WRWLock    = "rwlock"
	WCounter   = "counter"
	WMultiLock = "multilock"
	WTreeCache = "treecache"
)

// AllWorkloads lists every workload group in the order they run.
var AllWorkloads = []string{WUncontended, WContended, WLeader, WQueue, WRWLock, WCounter, WMultiLock, WTreeCache}

// unsupported lists the workload groups a library has no recipe for.
var unsupported = map[string][]string{
	ImplGoZK:  {WQueue, WRWLock, WCounter, WMultiLock, WTreeCache}, // zk.Lock only
	ImplKazoo: {WMultiLock},
}

// Ensemble is what the harness needs of a testenv ensemble.
type Ensemble interface {
	Addrs() []string       // proxied client addresses (the default link)
	DirectAddrs() []string // the servers themselves
	NewLink(name string) (*testenv.Link, error)
	// Timing is the servers' tickTime and syncLimit (0: standalone), for
	// recipes.WithEnsembleTiming.
	Timing() (tickTime time.Duration, syncLimit int)
}

// Config says what to run. Zero fields take the defaults, sized so that the
// whole run finishes in a few minutes on 2 cores.
type Config struct {
	Impls     []string // default AllImpls
	Workloads []string // default AllWorkloads

	Iterations   int           // uncontended (and multi-lock) acquire+release cycles measured; default 200
	Warmup       int           // uncontended (and multi-lock) cycles before measuring; default 20
	Duration     time.Duration // each contended, rw lock, counter, contended multi-lock and tree cache run; default 3s
	Contenders   []int         // contended levels; default 2, 8, 32
	ResignRounds int           // graceful leader handoffs; default 5
	ExpiryRounds int           // leader handoffs after session loss; default 2
	QueueItems   int           // items per queue phase; default 300
	Consumers    []int         // queue consumer counts; default 1, 4, 8
	RWClients    int           // rw lock clients; default 8
	RWWriteEvery int           // one op in this many is a write; default 10
	// CounterClients are the counter's contention levels: clients
	// incrementing one counter together; default 1, 4, 16.
	CounterClients []int
	// MultiContenders are the contended multi-lock levels; default 2, 8.
	MultiContenders []int
	// TreeFanout shapes the tree cache workload's tree: a root with
	// TreeFanout children of TreeFanout children each (the leaves, whose
	// data the writer sets); default 10 (111 nodes, 100 leaves).
	TreeFanout int
	// TreeWriters is how many sets the tree cache workload's writer keeps
	// in flight on the harness's own session for Duration; default 32
	// (about twice the rate of 8 on 2 cores).
	TreeWriters int
	// TreeCatchUp bounds how long a tree cache may take, after the last
	// write, to show every leaf's final value; default 30s.
	TreeCatchUp time.Duration

	SessionTimeout time.Duration // every client's; default 3s
	// Factories overrides the driver of an implementation (tests).
	Factories map[string]DriverFactory
	// Progress receives a line per finished figure; default discard.
	Progress io.Writer
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() (Config, error) {
	if len(c.Impls) == 0 {
		c.Impls = AllImpls
	}
	for _, i := range c.Impls {
		if !slices.Contains(AllImpls, i) {
			return c, fmt.Errorf("bench: unknown implementation %q (want %s)", i, strings.Join(AllImpls, ", "))
		}
	}
	if len(c.Workloads) == 0 {
		c.Workloads = AllWorkloads
	}
	for _, w := range c.Workloads {
		if !slices.Contains(AllWorkloads, w) {
			return c, fmt.Errorf("bench: unknown workload %q (want %s)", w, strings.Join(AllWorkloads, ", "))
		}
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.Iterations, 200)
	def(&c.Warmup, 20)
	def(&c.ResignRounds, 5)
	def(&c.ExpiryRounds, 2)
	def(&c.QueueItems, 300)
	def(&c.RWClients, 8)
	def(&c.RWWriteEvery, 10)
	def(&c.TreeFanout, 10)
	def(&c.TreeWriters, 32)
	if c.TreeCatchUp <= 0 {
		c.TreeCatchUp = 30 * time.Second
	}
	if c.Duration <= 0 {
		c.Duration = 3 * time.Second
	}
	if len(c.Contenders) == 0 {
		c.Contenders = []int{2, 8, 32}
	}
	if len(c.Consumers) == 0 {
		c.Consumers = []int{1, 4, 8}
	}
	if len(c.CounterClients) == 0 {
		c.CounterClients = []int{1, 4, 16}
	}
	if len(c.MultiContenders) == 0 {
		c.MultiContenders = []int{2, 8}
	}
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = 3 * time.Second
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return c, nil
}

// Floors of each workload (see Floor). An exclusive acquire costs a create
// and one listing, a release one delete; a waiter adds one watch (getData
// or exists) on its predecessor and is woken by exactly one notification,
// after which it holds without listing again. A leader handoff costs the
// resigning leader's delete; the next in line needs no request to know it
// leads. A queue put is one create; a take one getData and one delete,
// with listings amortised over many items. A counter increment is one
// getData and one versioned setData, and no watch; contention adds a pair
// per lost compare-and-set. A multi-lock cycle over 3 paths is 3 exclusive
// cycles; when every client takes the same sorted paths only the first is
// ever contended (whoever holds it is alone on the others, which the
// holder releases first), so a contended cycle adds one watch and one
// notification to the uncontended 9 requests. A tree cache learns of a
// cached node's data change from one notification and reads it with 1
// getData (package cache's documented cost), without listing: a true floor
// per update event delivered; per change written, the cost of a cache that
// reads every change on its own (changes that come faster than it reads
// are coalesced, and cost less).
var (
	floorRoundTrip   = Floor{Requests: 1, Lists: 0, Notifications: 0}
	floorUncontended = Floor{Requests: 3, Lists: 1, Notifications: 0}
	floorContended   = Floor{Requests: 4, Lists: 1, Notifications: 1}
	floorResign      = Floor{Requests: 1, Lists: 0, Notifications: 1}
	floorExpiry      = Floor{Requests: 0, Lists: 0, Notifications: 1}
	floorPut         = Floor{Requests: 1, Lists: 0, Notifications: 0}
	floorTake        = Floor{Requests: 2, Lists: 0, Notifications: 0}
	floorRW          = Floor{Requests: 4, Lists: 1, Notifications: -1}
	floorCounter     = Floor{Requests: 2, Lists: 0, Notifications: 0}
	floorMultiUncont = Floor{Requests: 3 * multiPaths, Lists: multiPaths, Notifications: 0}
	floorMultiCont   = Floor{Requests: 3*multiPaths + 1, Lists: multiPaths, Notifications: 1}
	floorTreeCache   = Floor{Requests: 1, Lists: 0, Notifications: 1}
)

// multiPaths is how many lock paths the multi-lock workload takes.
const multiPaths = 3

// harness is one run in progress.
type harness struct {
	cfg   Config
	e     Ensemble
	admin *zk.Conn
	base  string
	rep   *Report
	impls map[string]*implState
}

// Run runs every selected workload of every selected implementation
// against e and returns the report (with Speed filled). Workloads run one
// after the other, and within a workload the implementations run back to
// back, so that drifting load on the machine touches all of them alike.
// A workload that fails is recorded with its error and the run goes on;
// Run fails only when it cannot start at all or ctx ends.
func Run(ctx context.Context, e Ensemble, cfg Config) (*Report, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	admin, err := connectAdmin(ctx, e.DirectAddrs(), cfg.SessionTimeout)
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	h := &harness{cfg: cfg, e: e, admin: admin, base: fmt.Sprintf("/zkbench-%d", time.Now().UnixNano()),
		rep: &Report{Started: time.Now(), CPUs: runtime.NumCPU()}, impls: map[string]*implState{}}
	defer h.closeAll(ctx)
	if err := h.warmUp(ctx); err != nil {
		return nil, err
	}
	for _, w := range AllWorkloads {
		if !h.want(w) {
			continue
		}
		for _, impl := range cfg.Impls {
			if err := ctx.Err(); err != nil {
				return nil, context.Cause(ctx)
			}
			h.runOne(ctx, w, impl)
		}
	}
	h.rep.Duration = time.Since(h.rep.Started)
	h.rep.ComputeSpeeds()
	return h.rep, nil
}

// warmUp runs create/list/delete cycles through the proxied addresses
// before anything is measured, so that the first implementation does not
// pay for the servers' JIT warm-up.
func (h *harness) warmUp(ctx context.Context) error {
	c, err := connectAdmin(ctx, h.e.Addrs(), h.cfg.SessionTimeout)
	if err != nil {
		return err
	}
	defer c.Close()
	p := h.base + "/warmup"
	if err := h.ensure(p); err != nil {
		return err
	}
	for range 300 {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		n, err := c.Create(p+"/n-", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err == nil {
			_, _, err = c.Children(p)
		}
		if err == nil {
			_, _, err = c.Get(n)
		}
		if err == nil {
			err = c.Delete(n, -1)
		}
		if err != nil {
			return fmt.Errorf("bench: warm-up: %w", err)
		}
	}
	return nil
}

// implState is an implementation's counting proxy and driver, kept across
// workloads.
type implState struct {
	factory DriverFactory
	err     error // the implementation cannot run here
	proxy   *Proxy
	drv     Driver
}

func (h *harness) state(impl string) *implState {
	if st, ok := h.impls[impl]; ok {
		return st
	}
	st := &implState{}
	h.impls[impl] = st
	st.factory, st.err = h.factory(impl)
	if st.err != nil {
		h.rep.Notes = append(h.rep.Notes, fmt.Sprintf("%s not run: %v", impl, st.err))
		return st
	}
	st.proxy, st.err = NewProxy(h.e.Addrs(), zkcount.New())
	return st
}

func (st *implState) closeDriver(ctx context.Context) {
	if st.drv != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		_ = st.drv.Close(cctx)
		cancel()
		st.drv = nil
	}
}

func (h *harness) closeAll(ctx context.Context) {
	for _, st := range h.impls {
		st.closeDriver(ctx)
		if st.proxy != nil {
			_ = st.proxy.Close()
		}
	}
}

// runOne runs workload group w of impl through impl's counting proxy (the
// leader workload makes its own, one per participant).
func (h *harness) runOne(ctx context.Context, w, impl string) {
	st := h.state(impl)
	switch {
	case st.err != nil:
		h.fail(impl, w, st.err)
		return
	case slices.Contains(unsupported[impl], w):
		h.fail(impl, w, ErrUnsupported)
		return
	case w == WLeader:
		h.runLeader(ctx, impl, st.factory)
		return
	}
	if st.drv == nil {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		drv, err := st.factory(sctx, st.proxy.ConnectString(), h.cfg.SessionTimeout)
		cancel()
		if err != nil {
			h.fail(impl, w, err)
			return
		}
		st.drv = drv
	}
	c := st.proxy.Counter()
	var failed bool
	switch w {
	case WUncontended:
		failed = h.uncontended(ctx, impl, st.drv, c)
	case WContended:
		failed = h.contended(ctx, impl, st.drv, c)
	case WQueue:
		failed = h.queue(ctx, impl, st.drv, c)
	case WRWLock:
		failed = h.rwlock(ctx, impl, st.drv, c)
	case WCounter:
		failed = h.counter(ctx, impl, st.drv, c)
	case WMultiLock:
		failed = h.multilock(ctx, impl, st.drv, c)
	case WTreeCache:
		failed = h.treecache(ctx, impl, st.drv, c)
	}
	if failed {
		// A peer may still be busy with the failed command: start afresh
		// for the next workload.
		st.closeDriver(ctx)
	}
}

// timed bounds one measured call: a run of d, plus time to start and end.
func timed(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, 5*d+30*time.Second)
}

func (h *harness) factory(impl string) (DriverFactory, error) {
	if f, ok := h.cfg.Factories[impl]; ok {
		return f, nil
	}
	if err := Available(impl); err != nil {
		return nil, err
	}
	return Factory(impl)
}

func (h *harness) want(w string) bool { return slices.Contains(h.cfg.Workloads, w) }

// expected lists the result names a workload group produces.
func (h *harness) expected(w string) []string {
	switch w {
	case WUncontended:
		return []string{"uncontended"}
	case WContended:
		var out []string
		for _, k := range h.cfg.Contenders {
			out = append(out, fmt.Sprintf("contended-%d", k))
		}
		return out
	case WLeader:
		return []string{"leader-resign", "leader-expiry"}
	case WQueue:
		out := []string{"queue-put"}
		for _, k := range h.cfg.Consumers {
			out = append(out, fmt.Sprintf("queue-take-%d", k))
		}
		return out
	case WRWLock:
		return []string{"rwlock-mix"}
	case WCounter:
		var out []string
		for _, k := range h.cfg.CounterClients {
			out = append(out, fmt.Sprintf("counter-%d", k))
		}
		return out
	case WMultiLock:
		out := []string{"multilock-uncontended"}
		for _, k := range h.cfg.MultiContenders {
			out = append(out, fmt.Sprintf("multilock-contended-%d", k))
		}
		return out
	case WTreeCache:
		return []string{"treecache-changes", "treecache-events"}
	}
	return nil
}

func (h *harness) add(r Result) {
	h.rep.Results = append(h.rep.Results, r)
	if r.Err != "" {
		fmt.Fprintf(h.cfg.Progress, "%-14s %-24s n/a: %s\n", r.Impl, r.Workload, r.Err)
		return
	}
	fmt.Fprintf(h.cfg.Progress, "%-14s %-24s %s, %s req/op, %s lists/op, %s notif/op, %s B/op out, %s B/op in\n",
		r.Impl, r.Workload, r.figure(), fmtNum(r.Cost.Requests), fmtNum(r.Cost.Lists), fmtNum(r.Cost.Notifications),
		fmtNum(r.Cost.BytesOut), fmtNum(r.Cost.BytesIn))
}

func (h *harness) fail(impl, w string, err error) {
	for _, name := range h.expected(w) {
		h.add(Result{Workload: name, Impl: impl, Err: errText(err)})
	}
}

func errText(err error) string {
	if errors.Is(err, ErrUnsupported) {
		return "no such recipe in the library"
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

// cost divides the counts of a measured window by ops.
func cost(d zkcount.Counts, ops int) Cost {
	if ops <= 0 {
		return Cost{}
	}
	n := float64(ops)
	c := Cost{
		Requests:      float64(d.Total()) / n,
		Lists:         float64(d.Req(zkcount.OpGetChildren)+d.Req(zkcount.OpGetChildren2)) / n,
		Notifications: float64(d.Notifications) / n,
		BytesOut:      float64(d.BytesOut) / n,
		BytesIn:       float64(d.BytesIn) / n,
		ByOp:          map[string]float64{},
	}
	for op, v := range d.Requests {
		c.ByOp[op.String()] = float64(v) / n
	}
	return c
}

// settle waits until the counters have seen no request or notification for
// a while (background requests of the last operation, such as a watch set
// after acquiring, belong to it), at most 5 s.
func settle(ctx context.Context, cs ...*zkcount.Counter) {
	const quiet, most, poll = 300 * time.Millisecond, 5 * time.Second, 20 * time.Millisecond
	sum := func() int64 {
		var n int64
		for _, c := range cs {
			s := c.Snapshot()
			n += s.Total() + s.Notifications
		}
		return n
	}
	last, since, end := sum(), time.Now(), time.Now().Add(most)
	t := time.NewTicker(poll)
	defer t.Stop()
	for time.Now().Before(end) && time.Since(since) < quiet {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if n := sum(); n != last {
			last, since = n, time.Now()
		}
	}
}

func (h *harness) path(impl, w string) string { return path.Join(h.base, impl, w) }

// ensure creates p and its parents (persistent), so that no implementation
// pays for parents inside a measured window.
func (h *harness) ensure(p string) error {
	cur := ""
	for _, part := range strings.Split(strings.Trim(p, "/"), "/") {
		cur += "/" + part
		if _, err := h.admin.Create(cur, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("bench: create %s: %w", cur, err)
		}
	}
	return nil
}

func (h *harness) uncontended(ctx context.Context, impl string, drv Driver, c *zkcount.Counter) bool {
	p := h.path(impl, "uncontended")
	prep := h.ensure(p)
	// The unit: one raw write's round trip from the same client, in the
	// same run (not for the peers' drivers, which have none).
	rp := h.path(impl, WRoundTrip)
	if rt := h.latency(ctx, Result{Workload: WRoundTrip, Impl: impl, Floor: floorRoundTrip}, c, h.ensure(rp),
		func(ctx context.Context, n int) ([]time.Duration, error) { return drv.RoundTrip(ctx, rp, n) }); rt.Err != errText(ErrUnsupported) {
		h.add(rt)
	}
	r := h.latency(ctx, Result{Workload: "uncontended", Impl: impl, Floor: floorUncontended}, c, prep,
		func(ctx context.Context, n int) ([]time.Duration, error) { return drv.Uncontended(ctx, p, n) })
	h.add(r)
	return r.Err != ""
}

// latency fills r (named, with its floor) with the cycles of client 0:
// Warmup cycles, then Iterations measured ones (the figure is the median,
// in ms). A non-nil prep error fails r without running anything.
func (h *harness) latency(ctx context.Context, r Result, c *zkcount.Counter, prep error,
	run func(ctx context.Context, n int) ([]time.Duration, error)) Result {
	r.Unit, r.Lower = "ms", true
	err := prep
	if err == nil {
		_, err = run(ctx, h.cfg.Warmup)
	}
	var lat []time.Duration
	if err == nil {
		settle(ctx, c)
		before := c.Snapshot()
		cctx, cancel := context.WithTimeout(ctx, time.Duration(h.cfg.Iterations)*time.Second+30*time.Second)
		lat, err = run(cctx, h.cfg.Iterations)
		cancel()
		settle(ctx, c)
		r.Cost = cost(c.Snapshot().Sub(before), len(lat))
	}
	if err != nil {
		r.Err = errText(err)
	} else {
		s := Summarize(lat)
		r.Value, r.P99, r.Ops = ms(s.P50), ms(s.P99), s.N
	}
	return r
}

// rate fills r (named, with its unit and floor) with k clients looping
// for Duration (the figure is operations per second). run returns the
// operations done and the time taken; check, when not nil, vets the
// operations done once the run is over. A non-nil prep error fails r
// without running anything.
func (h *harness) rate(ctx context.Context, r Result, k int, drv Driver, c *zkcount.Counter, prep error,
	run func(ctx context.Context) (int, time.Duration, error), check func(ops int) error) Result {
	err := prep
	if err == nil {
		err = drv.Open(ctx, k)
	}
	var ops int
	var el time.Duration
	if err == nil {
		settle(ctx, c)
		before := c.Snapshot()
		cctx, cancel := timed(ctx, h.cfg.Duration)
		ops, el, err = run(cctx)
		cancel()
		settle(ctx, c)
		r.Cost = cost(c.Snapshot().Sub(before), ops)
	}
	if err == nil && (ops == 0 || el <= 0) {
		err = errors.New("no operation completed")
	}
	if err == nil && check != nil {
		err = check(ops)
	}
	if err != nil {
		r.Err = errText(err)
	} else {
		r.Value, r.Ops = float64(ops)/el.Seconds(), ops
	}
	return r
}

func (h *harness) contended(ctx context.Context, impl string, drv Driver, c *zkcount.Counter) bool {
	for _, k := range h.cfg.Contenders {
		name := fmt.Sprintf("contended-%d", k)
		p := h.path(impl, name)
		r := h.rate(ctx, Result{Workload: name, Impl: impl, Unit: "handoffs/s", Floor: floorContended}, k, drv, c, h.ensure(p),
			func(ctx context.Context) (int, time.Duration, error) { return drv.Contend(ctx, p, h.cfg.Duration, k) }, nil)
		h.add(r)
		if r.Err != "" {
			return true
		}
	}
	return false
}

// counter measures increments of one counter by k clients at once, for
// each k of CounterClients, each level on a counter of its own that starts
// at 0 (see ensureCounter). A level fails unless the counter's final
// value, read by the harness's own session, is the number of increments
// the implementation reported as successful.
func (h *harness) counter(ctx context.Context, impl string, drv Driver, c *zkcount.Counter) bool {
	for _, k := range h.cfg.CounterClients {
		name := fmt.Sprintf("counter-%d", k)
		p := h.path(impl, name)
		check := func(ops int) error {
			v, err := h.counterValue(impl, p)
			if err == nil && v != int64(ops) {
				err = fmt.Errorf("final value %d after %d successful increments", v, ops)
			}
			return err
		}
		r := h.rate(ctx, Result{Workload: name, Impl: impl, Unit: "incr/s", Floor: floorCounter}, k, drv, c, h.ensureCounter(p),
			func(ctx context.Context) (int, time.Duration, error) {
				return drv.Increments(ctx, p, h.cfg.Duration, k)
			}, check)
		h.add(r)
		if r.Err != "" {
			return true
		}
	}
	return false
}

// ensureCounter creates the counter node p with empty data, which every
// implementation reads as 0, so that none pays for creating it. The data
// is empty, not null: kazoo 2.8's Counter fails on a node whose data is
// null (AttributeError on None.decode).
func (h *harness) ensureCounter(p string) error {
	if err := h.ensure(path.Dir(p)); err != nil {
		return err
	}
	if _, err := h.admin.Create(p, []byte{}, 0, zk.WorldACL(zk.PermAll)); err != nil {
		return fmt.Errorf("bench: create %s: %w", p, err)
	}
	return nil
}

// counterValue reads the counter at p in impl's format: kazoo's Counter
// keeps ASCII text, the others Curator's DistributedAtomicLong layout (8
// bytes, big endian); empty data is 0 in both.
func (h *harness) counterValue(impl, p string) (int64, error) {
	data, _, err := h.admin.Get(p)
	if err != nil {
		return 0, fmt.Errorf("bench: read counter %s: %w", p, err)
	}
	if impl == ImplKazoo {
		if len(data) == 0 {
			return 0, nil
		}
		v, err := strconv.ParseInt(string(data), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("bench: counter %s: %w", p, err)
		}
		return v, nil
	}
	v, err := shared.DecodeLong(data)
	if err != nil {
		return 0, fmt.Errorf("bench: counter %s: %w", p, err)
	}
	return v, nil
}

// multiPathsUnder returns the multi-lock workload's lock paths under p,
// sorted (the order every implementation is given them in), and creates
// them.
func (h *harness) multiPathsUnder(p string) ([]string, error) {
	var paths []string
	for i := range multiPaths {
		q := fmt.Sprintf("%s/k%d", p, i)
		if err := h.ensure(q); err != nil {
			return nil, err
		}
		paths = append(paths, q)
	}
	return paths, nil
}

// multilock measures a multi-lock over multiPaths paths: the cycle time of
// one client alone, then cycles per second of each level of
// MultiContenders.
func (h *harness) multilock(ctx context.Context, impl string, drv Driver, c *zkcount.Counter) bool {
	paths, err := h.multiPathsUnder(h.path(impl, "multilock-uncontended"))
	r := h.latency(ctx, Result{Workload: "multilock-uncontended", Impl: impl, Floor: floorMultiUncont}, c, err,
		func(ctx context.Context, n int) ([]time.Duration, error) { return drv.MultiUncontended(ctx, paths, n) })
	h.add(r)
	if r.Err != "" {
		for _, k := range h.cfg.MultiContenders {
			h.add(Result{Workload: fmt.Sprintf("multilock-contended-%d", k), Impl: impl, Err: "not run: uncontended failed"})
		}
		return true
	}
	for _, k := range h.cfg.MultiContenders {
		name := fmt.Sprintf("multilock-contended-%d", k)
		paths, err := h.multiPathsUnder(h.path(impl, name))
		r := h.rate(ctx, Result{Workload: name, Impl: impl, Unit: "cycles/s", Floor: floorMultiCont}, k, drv, c, err,
			func(ctx context.Context) (int, time.Duration, error) {
				return drv.MultiContend(ctx, paths, h.cfg.Duration, k)
			}, nil)
		h.add(r)
		if r.Err != "" {
			return true
		}
	}
	return false
}

func (h *harness) rwlock(ctx context.Context, impl string, drv Driver, c *zkcount.Counter) bool {
	p := h.path(impl, "rwlock")
	r := Result{Workload: "rwlock-mix", Impl: impl, Unit: "ops/s", Floor: floorRW}
	err := h.ensure(p)
	if err == nil {
		err = drv.Open(ctx, h.cfg.RWClients)
	}
	var ops int
	var el time.Duration
	if err == nil {
		settle(ctx, c)
		before := c.Snapshot()
		cctx, cancel := timed(ctx, h.cfg.Duration)
		ops, el, err = drv.RWMix(cctx, p, h.cfg.Duration, h.cfg.RWWriteEvery, h.cfg.RWClients)
		cancel()
		if impl == ImplKazoo && errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no progress in %s: kazoo 2.8's read/write lock deadlocks when a reader "+
				"and a later writer watch each other (python-zk/kazoo#649, fixed in 2.9): %w", 5*h.cfg.Duration+30*time.Second, err)
		}
		settle(ctx, c)
		r.Cost = cost(c.Snapshot().Sub(before), ops)
	}
	if err == nil && (ops == 0 || el <= 0) {
		err = errors.New("no operation completed")
	}
	if err != nil {
		r.Err = errText(err)
	} else {
		r.Value, r.Ops = float64(ops)/el.Seconds(), ops
	}
	h.add(r)
	return err != nil && !errors.Is(err, ErrUnsupported)
}

func (h *harness) queue(ctx context.Context, impl string, drv Driver, c *zkcount.Counter) bool {
	p := h.path(impl, "queue")
	n := h.cfg.QueueItems
	if err := h.ensure(p); err != nil {
		h.fail(impl, WQueue, err)
		return true
	}
	settle(ctx, c)
	before := c.Snapshot()
	el, err := drv.Put(ctx, p, n)
	settle(ctx, c)
	put := Result{Workload: "queue-put", Impl: impl, Unit: "items/s", Floor: floorPut, Ops: n,
		Cost: cost(c.Snapshot().Sub(before), n)}
	if err != nil {
		h.fail(impl, WQueue, err)
		return !errors.Is(err, ErrUnsupported)
	}
	put.Value = float64(n) / el.Seconds()
	h.add(put)
	type takeRow struct {
		name string
		k    int
		take func(ctx context.Context, path string, n, k int) (time.Duration, error)
	}
	var rows []takeRow
	for _, k := range h.cfg.Consumers {
		rows = append(rows, takeRow{fmt.Sprintf("queue-take-%d", k), k, drv.Take})
	}
	if st, ok := drv.(SpreadTaker); ok {
		for _, k := range h.cfg.Consumers {
			if k > 1 {
				rows = append(rows, takeRow{fmt.Sprintf("queue-take-%d-spread", k), k, st.TakeSpread})
			}
		}
	}
	for i, row := range rows {
		r := Result{Workload: row.name, Impl: impl, Unit: "items/s", Floor: floorTake, Ops: n}
		var err error
		if i > 0 { // the first take consumes the items just put
			_, err = drv.Put(ctx, p, n)
		}
		if err == nil {
			err = drv.Open(ctx, row.k)
		}
		if err == nil {
			settle(ctx, c)
			before := c.Snapshot()
			el, err = row.take(ctx, p, n, row.k)
			settle(ctx, c)
			r.Cost = cost(c.Snapshot().Sub(before), n)
		}
		if err != nil {
			r.Err = errText(err)
			h.add(r)
			return true
		}
		r.Value = float64(n) / el.Seconds()
		h.add(r)
	}
	return false
}

// connectAdmin opens the harness's own session, straight to the servers: it
// creates paths and observes leaders' nodes, and is never counted.
func connectAdmin(ctx context.Context, addrs []string, timeout time.Duration) (*zk.Conn, error) {
	c, ev, err := zk.Connect(addrs, timeout, zk.WithLogger(nopLogger{}), zk.WithLogInfo(false))
	if err != nil {
		return nil, fmt.Errorf("bench: admin connect: %w", err)
	}
	connected := make(chan struct{})
	go func() {
		closed := false
		for e := range ev {
			if e.State == zk.StateHasSession && !closed {
				close(connected)
				closed = true
			}
		}
	}()
	select {
	case <-connected:
		return c, nil
	case <-ctx.Done():
		c.Close()
		return nil, fmt.Errorf("bench: admin connect: %w", context.Cause(ctx))
	}
}
