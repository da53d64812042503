package scale

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/lab/bench"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
)

// The queue series: how a distributed queue's put and take costs grow
// with the number of items waiting in it, and the size at which takes
// stop working.
//
// For each implementation (zkrecipes queue.Queue, Curator 5.4's
// SimpleDistributedQueue, kazoo 2.8's Queue: the drivers' Put and
// QueueTake; go-zookeeper has no queue) on a queue of its own, for sizes N
// on a 1-2-5 ladder: the harness's own session (straight to the servers,
// not counted) brings the queue to N items of 100 bytes with raw
// sequential creates in the recipe's node-name layout (qFill: multis of
// qFillBatch creates, qFillInFlight in flight: a recipe's put, one round
// trip per item, would take minutes at the top of the ladder); then the
// implementation's client 0 puts qOps items (Put) and takes qOps items
// (QueueTake, one consumer, on a new queue object so that a recipe
// caching its listing lists once), each through its counting proxy. A
// first take of one item (the probe, not counted) comes before the
// measured ones, under a short deadline, so that a size at which takes
// fail is found in seconds: the curve ends there, and the break is
// narrowed down by bisection (qBisect) within the budget.

func init() {
	register(Series{Name: "queue", Share: 0.45, Run: runQueue})
}

const (
	qItemBytes    = 100 // every item's data, as the queue workload's Put
	qOps          = 200 // puts and takes measured per size
	qQuickOps     = 20  // the same with Env.Quick
	qFillBatch    = 100 // creates (or deletes) per multi when filling (emptying)
	qFillInFlight = 8   // multis in flight when filling (emptying)
	// qItemHeapKB is a server's heap per item of qItemBytes, measured
	// (see qHeapNote), and qHeapUse the part of a server's heap the items
	// may fill: qMaxItems derives the ladder's top from both.
	qItemHeapKB = 0.65
	qHeapUse    = 0.6
	// qProbeMin is the least time a probe take is given.
	qProbeMin = 3 * time.Second
	// qBreakAllowance is how far past its budget an implementation may go
	// to narrow down a break: the series' main finding. Testing the
	// prediction of the Java client's limit (two probes) is not bounded by
	// the budget at all.
	qBreakAllowance = 20 * time.Second
)

// qMaxItems is the ladder's top for servers of heapMB megabytes each:
// the largest size whose items fill at most qHeapUse of the heap, at
// qItemHeapKB each. testenv's default 128 MB gives 100,000; the 1280 MB
// zkbench -scale gives its servers, 1,000,000.
func qMaxItems(heapMB int) int {
	top := 0
	for _, n := range qLadder {
		if float64(n)*qItemHeapKB <= qHeapUse*float64(heapMB)*1024 {
			top = n
		}
	}
	return top
}

// qHeapNote says why the ladder stops where it does.
func qHeapNote(heapMB int) string {
	return fmt.Sprintf("A 100-byte item costs a server about 0.55-0.65 KB of heap (measured with jcmd GC.heap_info after a "+
		"full GC on a 1-server processes-backend ensemble of testenv's default -Xmx128m: 16 MB live empty, 53 MB at 50,000 "+
		"items, 79 MB at 100,000, the old generation 99%% full at 150,000). The servers of this run have -Xmx%dm each, so "+
		"the ladder stops at %d items (at most %.0f%% of the heap)", heapMB, qMaxItems(heapMB), 100*qHeapUse)
}

// qLadder is the 1-2-5 ladder of queue sizes.
var qLadder = []int{1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000}

// qPrefix returns the item name an implementation's queue creates, before
// the 10-digit sequence: Curator's (and ZooKeeper's) "qn-", which
// zkrecipes' queue.Queue writes by default, or kazoo's "entry-<priority>-"
// at kazoo's default priority 100.
func qPrefix(impl string) string {
	if impl == bench.ImplKazoo {
		return "entry-100-"
	}
	return "qn-"
}

// qListingBytes is the size on the wire, length prefix included, of a
// getChildren reply listing n items named prefix + 10 digits: length 4,
// reply header 16 (xid, zxid, err), vector count 4, each name as length 4
// + bytes, then stat bytes: 0 for getChildren (kazoo), qStatBytes for
// getChildren2, which also returns the parent's Stat (ZooKeeper's Java
// client's getChildren with a Stat argument, which Curator calls, and
// go-zookeeper's Children).
func qListingBytes(prefix string, n, stat int) int {
	return 4 + 16 + 4 + n*(4+len(prefix)+10) + stat
}

// qStatBytes is the size of a Stat on the wire.
const qStatBytes = 68

// qMetric names the figures of the series, in order.
var qMetrics = []struct{ name, title, ylabel string }{
	{"queue-put-requests", "Queue put: requests per item vs items waiting", "requests per put"},
	{"queue-put-bytes-in", "Queue put: bytes received per item vs items waiting", "bytes received per put"},
	{"queue-put-ms", "Queue put: milliseconds per item vs items waiting", "ms per put"},
	{"queue-take-requests", "Queue take: requests per item vs items waiting", "requests per take"},
	{"queue-take-bytes-in", "Queue take: bytes received per item vs items waiting", "bytes received per take"},
	{"queue-take-ms", "Queue take: milliseconds per item vs items waiting", "ms per take"},
}

// qWeight is impl's weight in the share of the series' budget.
func qWeight(impl string) int {
	if impl == bench.ImplZkrecipes {
		return 2
	}
	return 1
}

// qImpl is one implementation's run: its curves (one per metric), and
// what the figures' notes say about it.
type qImpl struct {
	impl   string
	points [6][]Point
	note   []string
	brk    string // where takes stopped working, for the figures' notes
	big    int    // the largest listing reply read, when beyond the 1 MiB default
}

func (q *qImpl) add(n int, v [6]float64) {
	for i := range v {
		q.points[i] = append(q.points[i], Point{X: float64(n), Y: v[i]})
	}
}

func runQueue(ctx context.Context, env *Env) ([]Figure, error) {
	ops, ladder := qOps, qLadder
	if env.Quick {
		ops, ladder = qQuickOps, qLadder[:2]
	}
	admin, err := qbAdmin(ctx, env)
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	base := fmt.Sprintf("/zkscale-queue-%d", time.Now().UnixNano())
	if err := qbEnsure(ctx, admin, base); err != nil {
		return nil, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if err := qbDeleteTree(cctx, admin, base); err != nil {
			env.Logf("scale: queue: cleanup of %s: %v", base, err)
		}
	}()
	start := time.Now()
	var runs []*qImpl
	var todo []string
	for _, impl := range env.Impls {
		r := &qImpl{impl: impl}
		runs = append(runs, r)
		switch {
		case impl == bench.ImplGoZK:
			r.note = append(r.note, "no queue recipe in the library")
		case bench.Available(impl) != nil:
			r.note = append(r.note, fmt.Sprintf("not run: %v", bench.Available(impl)))
		default:
			todo = append(todo, impl)
		}
	}
	var errs []error
	for i, impl := range todo {
		r := runs[slices.IndexFunc(runs, func(r *qImpl) bool { return r.impl == impl })]
		// Each implementation gets its weight's share of what is left, so
		// one that stops early leaves its time to the next; zkrecipes, the
		// subject, weighs two (its climb to the top of the ladder is the
		// series' point).
		left := env.Budget - time.Since(start)
		weights := 0
		for _, rest := range todo[i:] {
			weights += qWeight(rest)
		}
		budget := left * time.Duration(qWeight(impl)) / time.Duration(weights)
		run := &qRun{env: env, admin: admin, impl: impl, path: path.Join(base, impl), prefix: qPrefix(impl),
			ops: ops, budget: budget, start: time.Now(), r: r}
		if err := run.do(ctx, ladder); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", impl, err))
			r.note = append(r.note, fmt.Sprintf("failed: %v", err))
		}
		if pts := r.points[0]; r.brk == "" && len(pts) > 0 {
			top := int(pts[len(pts)-1].X)
			b := qListingBytes(run.prefix, top, run.stat)
			r.brk = fmt.Sprintf("%s: takes work at every size measured, up to %d items, whose listing reply is %d bytes "+
				"on the wire (%s 1 MiB).", impl, top, b, map[bool]string{true: "beyond", false: "within"}[b-4 > qJavaLimit])
			if b-4 > qJavaLimit {
				r.big = b
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	return qFigures(runs, ops, env.heapMB()), errors.Join(errs...)
}

// qFigures assembles the six figures from the runs.
func qFigures(runs []*qImpl, ops, heapMB int) []Figure {
	common := []string{
		fmt.Sprintf("A point at N: the queue holds N items of %d bytes (brought there by the harness's own session with raw "+
			"sequential creates in the recipe's node-name layout, %d per multi, %d multis in flight: a put per item would "+
			"take minutes at the top of the ladder), then client 0 of the implementation puts %d items and takes %d "+
			"(one consumer, on a new queue object), counted on the wire through its proxy. zkrecipes and kazoo cache "+
			"the sorted listing and take from it, so one listing of about N names is shared by the %d takes; "+
			"Curator's SimpleDistributedQueue lists the whole queue for every take.", qItemBytes, qFillBatch,
			qFillInFlight, ops, ops, ops),
		"The servers have no jute.maxbuffer property, so ZooKeeper's default " +
			"0xfffff bytes (1 MiB - 1) bounds what a server reads (requests) and, by the same default, what ZooKeeper's " +
			"Java client reads (replies); the server itself sends replies of any size.",
		qHeapNote(heapMB) + ".",
	}
	var breaks []string
	for _, r := range runs {
		if r.brk != "" {
			breaks = append(breaks, r.brk)
		}
	}
	var bigs []string
	for _, r := range runs {
		if r.big > 0 {
			bigs = append(bigs, fmt.Sprintf("%s read listings of %d bytes", r.impl, r.big))
		}
	}
	if len(bigs) > 0 {
		breaks = append(breaks, "The servers send listing replies beyond 1 MiB ("+strings.Join(bigs, ", ")+" from them): "+
			"a reply that large is refused by a client whose own limit it exceeds, not by the server.")
	}
	var figs []Figure
	for i, m := range qMetrics {
		f := Figure{Name: m.name, Title: m.title, XLabel: "items in the queue", YLabel: m.ylabel,
			Notes: append([]string(nil), common...)}
		if strings.HasPrefix(m.name, "queue-take") {
			f.Notes = append(f.Notes, breaks...)
		}
		for _, r := range runs {
			f.Curves = append(f.Curves, Curve{Impl: r.impl, Points: r.points[i], Note: strings.Join(r.note, "; ")})
		}
		figs = append(figs, f)
	}
	return figs
}

// qRun is one implementation's climb up the ladder.
type qRun struct {
	env    *Env
	admin  *zk.Conn
	impl   string
	path   string
	prefix string
	ops    int
	budget time.Duration
	start  time.Time
	r      *qImpl

	proxy *bench.Proxy
	drv   bench.Driver
	count int // items in the queue, as far as the harness knows

	fillRate  float64       // items per second filled (or deleted), measured
	takeMs    float64       // ms per take at the last size measured
	lastN     int           // the last size measured
	lastStep  time.Duration // the time that size's measurement took (its fill excluded)
	resized   time.Duration // the time the last resize took
	stat      int           // stat bytes in the implementation's listing reply (see qListingBytes)
	probeN    int           // the queue's size at the last probe that worked
	probeTook time.Duration // that probe's time
}

func (q *qRun) do(ctx context.Context, ladder []int) (err error) {
	q.env.Logf("scale: queue: %s (budget %s)", q.impl, q.budget.Round(time.Second))
	if err := qbEnsure(ctx, q.admin, q.path); err != nil {
		return err
	}
	defer func() {
		t0 := time.Now()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if q.drv != nil {
			_ = q.drv.Close(cctx)
		}
		if q.proxy != nil {
			_ = q.proxy.Close()
		}
		n, derr := qbDeleteChildren(cctx, q.admin, q.path, -1)
		if derr == nil {
			derr = qbCall(cctx, func() error { return q.admin.Delete(q.path, -1) })
		}
		q.env.Logf("scale: queue: %s: deleted %d items in %s", q.impl, n, time.Since(t0).Round(time.Millisecond))
		err = errors.Join(err, derr)
	}()
	q.proxy, err = bench.NewProxy(q.env.Ensemble.Addrs(), zkcount.New())
	if err != nil {
		return err
	}
	factory, err := bench.Factory(q.impl)
	if err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	q.drv, err = factory(sctx, q.proxy.ConnectString(), q.env.SessionTimeout)
	cancel()
	if err != nil {
		return err
	}
	for i, n := range ladder {
		if top := qMaxItems(q.env.heapMB()); n > top {
			q.r.note = append(q.r.note, fmt.Sprintf("sizes above %d not run: the servers' heap (see the notes)", top))
			break
		}
		if i > 0 {
			if est, left := q.estimate(n), q.budget-time.Since(q.start); est > left {
				// No time to measure n: probe it still, if that fits, so
				// that a break is found.
				return q.probeOnly(ctx, n, est, left)
			}
		}
		t0 := time.Now()
		ok, err := q.size(ctx, n)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		q.lastN, q.lastStep = n, time.Since(t0)-q.resized
	}
	return nil
}

// estimate is how long the size n would take, the cleanup after it
// included: its fill at the measured rate, the measurement scaled from the
// last size (linearly: Curator's takes each list the whole queue), and
// the deletes of all n items at the same rate.
func (q *qRun) estimate(n int) time.Duration {
	rate := q.fillRate
	if rate <= 0 {
		rate = 2000
	}
	fill := time.Duration(float64(n-q.lastN) / rate * float64(time.Second))
	measure := time.Duration(float64(q.lastStep) * float64(n) / float64(max(q.lastN, 1)))
	cleanup := time.Duration(float64(n) / rate * float64(time.Second))
	return fill + measure + cleanup
}

// resize brings the queue to n items with the harness's session: creates
// in the recipe's layout, or deletes of the newest items.
func (q *qRun) resize(ctx context.Context, n int) error {
	t0 := time.Now()
	d := n - q.count
	var err error
	switch {
	case d > 0:
		err = qbFill(ctx, q.admin, q.path, q.prefix, d)
	case d < 0:
		_, err = qbDeleteChildren(ctx, q.admin, q.path, -d)
	}
	if err != nil {
		return fmt.Errorf("resize to %d items: %w", n, err)
	}
	q.resized = time.Since(t0)
	if qAbs(d) >= 1000 && q.resized > 0 {
		q.fillRate = float64(qAbs(d)) / q.resized.Seconds()
	}
	q.count = n
	return nil
}

func qAbs(x int) int { return max(x, -x) }

// recount sets count from a listing by the harness's session.
func (q *qRun) recount(ctx context.Context) error {
	return qbCall(ctx, func() error {
		names, _, err := q.admin.Children(q.path)
		q.count = len(names)
		return err
	})
}

// expectTakeMs is the time a take is expected to take at n items: the last
// size's, scaled linearly (the cost of a listing per take), at least 1 ms.
func (q *qRun) expectTakeMs(n int) float64 {
	if q.lastN == 0 {
		return 1
	}
	return max(q.takeMs*float64(n)/float64(q.lastN), 1)
}

// probeDeadline is the time a probe take is given at n items: 20 times a
// take's expected time, 10 times the last probe's scaled to n (the first
// take lists the queue), qProbeMin at least.
func (q *qRun) probeDeadline(n int) time.Duration {
	d := max(qProbeMin, time.Duration(20*q.expectTakeMs(n)*float64(time.Millisecond)))
	if q.probeN > 0 && n > q.probeN {
		d = max(d, 10*time.Duration(float64(q.probeTook)*float64(n)/float64(q.probeN)))
	}
	return d
}

// probe takes one item under a short deadline: nil, or why it failed,
// with the reconnections the proxy saw meanwhile (a client that drops
// its connection on a reply it cannot read reconnects and retries).
func (q *qRun) probe(ctx context.Context) error {
	before := q.proxy.Counter().Snapshot()
	pctx, cancel := context.WithTimeout(ctx, q.probeDeadline(q.count))
	took, err := q.drv.QueueTake(pctx, q.path, 1)
	cancel()
	if err == nil {
		q.env.Logf("scale: queue: %s: probe take at %d items: %s", q.impl, q.count, took.Round(time.Millisecond))
		q.probeN, q.probeTook = q.count, took
		q.count--
		return nil
	}
	d := q.proxy.Counter().Snapshot().Sub(before)
	if rerr := q.recount(ctx); rerr != nil {
		return errors.Join(err, rerr)
	}
	return fmt.Errorf("%w (%d connections opened meanwhile, %d getChildren sent)", err, d.Connects,
		d.Req(zkcount.OpGetChildren)+d.Req(zkcount.OpGetChildren2))
}

// size measures the queue at n items. ok is false when takes failed: the
// curve ends there (noted, the break bisected); err is for what stops the
// series' own work (fill, cleanup, ctx).
func (q *qRun) size(ctx context.Context, n int) (ok bool, err error) {
	if err := q.resize(ctx, n); err != nil {
		return false, err
	}
	c := q.proxy.Counter()
	var v [6]float64

	qbSettle(ctx, c)
	before := c.Snapshot()
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second+time.Duration(q.ops)*time.Second)
	el, err := q.drv.Put(pctx, q.path, q.ops)
	cancel()
	qbSettle(ctx, c)
	d := c.Snapshot().Sub(before)
	if err != nil {
		q.r.note = append(q.r.note, fmt.Sprintf("puts failed at %d items: %v", n, qOneLine(err)))
		return false, q.recount(ctx)
	}
	q.count += q.ops
	v[0], v[1], v[2] = qbPer(d.Total(), q.ops), qbPer(d.BytesIn, q.ops), qMsPer(el, q.ops)

	if err := q.probe(ctx); err != nil {
		q.broke(ctx, n, err)
		return false, nil
	}
	qbSettle(ctx, c)
	before = c.Snapshot()
	expect := time.Duration(q.expectTakeMs(n) * float64(q.ops) * float64(time.Millisecond))
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second+10*expect)
	el, err = q.drv.QueueTake(tctx, q.path, q.ops)
	cancel()
	qbSettle(ctx, c)
	d = c.Snapshot().Sub(before)
	if err != nil {
		q.r.note = append(q.r.note, fmt.Sprintf("takes failed at %d items after a probe take succeeded: %v", n, qOneLine(err)))
		return false, q.recount(ctx)
	}
	q.count -= q.ops
	if d.Req(zkcount.OpGetChildren2) > 0 {
		q.stat = qStatBytes
	}
	v[3], v[4], v[5] = qbPer(d.Total(), q.ops), qbPer(d.BytesIn, q.ops), qMsPer(el, q.ops)
	q.takeMs = v[5]
	q.r.add(n, v)
	q.env.Logf("scale: queue: %s at %d: put %.2f req %.0f B in %.2f ms; take %.2f req %.0f B in %.2f ms",
		q.impl, n, v[0], v[1], v[2], v[3], v[4], v[5])
	return true, nil
}

// probeOnly is the last step of a ladder cut short by the budget (size n
// would take est, left remains): when a fill to n, a probe take and the
// cleanup fit in left, it probes n, and bisects a break found there.
func (q *qRun) probeOnly(ctx context.Context, n int, est, left time.Duration) error {
	stopped := fmt.Sprintf("not measured at %d items: that size would take about %s (fill, measure, and deleting the queue "+
		"after it), %s of the budget left", n, est.Round(time.Second), left.Round(time.Second))
	rate := max(q.fillRate, 1000)
	need := time.Duration(float64(n-q.count+n)/rate*float64(time.Second)) + 2*q.probeDeadline(n)
	if need > left {
		q.r.note = append(q.r.note, stopped)
		return nil
	}
	if err := q.resize(ctx, n); err != nil {
		return err
	}
	if err := q.probe(ctx); err != nil {
		q.r.note = append(q.r.note, stopped+", but probed")
		q.broke(ctx, n, err)
		return nil
	}
	q.r.note = append(q.r.note, stopped+"; a probe take works there")
	return nil
}

// qJavaLimit is the largest reply length (its 4-byte prefix excluded)
// that ZooKeeper's Java client reads: its jute.maxbuffer, 0xfffff by
// default; a longer one makes it drop the connection ("Packet len ... is
// out of range!", ClientCnxnSocket.readLength, 3.8.0).
const qJavaLimit = 0xfffff

// qJavaBreak is the smallest queue whose listing (with stat bytes, see
// qListingBytes) the Java client refuses.
func qJavaBreak(prefix string, stat int) int {
	per := 4 + len(prefix) + 10
	fixed := 16 + 4 + stat
	return (qJavaLimit-fixed)/per + 1
}

// broke notes that takes failed at n items and narrows down where: it
// first tests the prediction that the Java client's limit is the cause
// (a probe just below its break and one at it), then bisects what is left
// of the interval.
func (q *qRun) broke(ctx context.Context, n int, cause error) {
	q.env.Logf("scale: queue: %s: takes fail at %d items: %v", q.impl, n, cause)
	lo, hi := q.lastN, n
	predicted := ""
	if b := qJavaBreak(q.prefix, q.stat); lo < b-1 && b < hi {
		l, h := q.bisectAt(ctx, lo, hi, b-1)
		if l == b-1 && h == hi {
			l, h = q.bisectAt(ctx, l, h, b)
		}
		lo, hi = l, h
		predicted = fmt.Sprintf(" (the Java client's limit predicted %d items: the first listing reply longer than "+
			"0xfffff bytes after its length prefix)", b)
		if lo == b-1 && hi == b {
			predicted = fmt.Sprintf(" (exactly where the Java client's limit puts it: %d items make the first listing "+
				"reply longer than 0xfffff bytes after its length prefix, %d)", b, qListingBytes(q.prefix, b, q.stat)-4)
		}
	}
	lo, hi = q.bisect(ctx, lo, hi)
	q.r.note = append(q.r.note, fmt.Sprintf("takes fail from %d items on (%s)", hi, qOneLine(cause)))
	q.r.brk = fmt.Sprintf("%s: takes stop working between %d items (a take works; its listing reply is %d bytes "+
		"on the wire) and %d items (no take within the probe's deadline; %d bytes)%s. At %d items: %s.", q.impl, lo,
		qListingBytes(q.prefix, lo, q.stat), hi, qListingBytes(q.prefix, hi, q.stat), predicted, n, qOneLine(cause))
}

// bisectAt probes size m of [lo, hi) and returns the narrowed interval.
func (q *qRun) bisectAt(ctx context.Context, lo, hi, m int) (int, int) {
	if err := q.resize(ctx, m); err != nil {
		q.r.note = append(q.r.note, fmt.Sprintf("bisection stopped: %v", err))
		return lo, hi
	}
	if err := q.probe(ctx); err != nil {
		q.env.Logf("scale: queue: %s: probe at %d fails", q.impl, m)
		return lo, m
	}
	q.env.Logf("scale: queue: %s: probe at %d works", q.impl, m)
	return m, hi
}

// bisect narrows [lo, hi) (takes work at lo, fail at hi) to 1% of lo,
// while the budget and qBreakAllowance last; each step resizes the queue
// and probes.
func (q *qRun) bisect(ctx context.Context, lo, hi int) (int, int) {
	for hi-lo > max(lo/100, 1) && ctx.Err() == nil {
		// Keep time for the cleanup: deleting what is there.
		rate := max(q.fillRate, 1000)
		cleanup := time.Duration(float64(q.count) / rate * float64(time.Second))
		if time.Since(q.start)+cleanup+2*q.probeDeadline(hi) > q.budget+qBreakAllowance {
			q.r.note = append(q.r.note, fmt.Sprintf("bisection of the break stopped at [%d, %d): budget", lo, hi))
			break
		}
		l, h := q.bisectAt(ctx, lo, hi, (lo+hi)/2)
		if l == lo && h == hi {
			break // resize failed
		}
		lo, hi = l, h
	}
	return lo, hi
}

func qbPer(v int64, n int) float64 { return float64(v) / float64(n) }

func qMsPer(d time.Duration, n int) float64 {
	return float64(d) / float64(time.Millisecond) / float64(n)
}

func qOneLine(err error) string {
	s := strings.ReplaceAll(err.Error(), "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// --- the harness's own session (shared with the barrier series) ---

type qbNopLogger struct{}

func (qbNopLogger) Printf(string, ...any) {}

// qbAdmin opens the harness's own session straight to the servers (not
// through a counting proxy).
func qbAdmin(ctx context.Context, env *Env) (*zk.Conn, error) {
	c, ev, err := zk.Connect(env.Ensemble.DirectAddrs(), env.SessionTimeout, zk.WithLogger(qbNopLogger{}), zk.WithLogInfo(false))
	if err != nil {
		return nil, fmt.Errorf("scale: admin connect: %w", err)
	}
	connected := make(chan struct{})
	go func() {
		once := sync.OnceFunc(func() { close(connected) })
		for e := range ev {
			if e.State == zk.StateHasSession {
				once()
			}
		}
	}()
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	select {
	case <-connected:
		return c, nil
	case <-cctx.Done():
		c.Close()
		return nil, fmt.Errorf("scale: admin connect: %w", context.Cause(cctx))
	}
}

// qbCall runs f, a go-zookeeper call (which takes no context), and returns
// its error, or ctx's if ctx ends first (f then finishes on its own: a
// go-zookeeper call ends at the latest when its session's connection is
// lost).
func qbCall(ctx context.Context, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// qbEnsure creates p and its parents (persistent).
func qbEnsure(ctx context.Context, c *zk.Conn, p string) error {
	cur := ""
	for _, part := range strings.Split(strings.Trim(p, "/"), "/") {
		cur += "/" + part
		err := qbCall(ctx, func() error {
			_, err := c.Create(cur, nil, 0, zk.WorldACL(zk.PermAll))
			return err
		})
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("scale: create %s: %w", cur, err)
		}
	}
	return nil
}

// qbMultis sends ops in multis of qFillBatch, qFillInFlight at a time, and
// stops at the first error.
func qbMultis(ctx context.Context, c *zk.Conn, ops []any) error {
	batches := make(chan []any)
	errs := make(chan error, qFillInFlight)
	var wg sync.WaitGroup
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range qFillInFlight {
		wg.Go(func() {
			for b := range batches {
				err := qbCall(wctx, func() error {
					_, err := c.Multi(b...)
					return err
				})
				if err != nil {
					errs <- err
					cancel()
					return
				}
			}
		})
	}
feed:
	for i := 0; i < len(ops); i += qFillBatch {
		select {
		case batches <- ops[i:min(i+qFillBatch, len(ops))]:
		case <-wctx.Done():
			break feed
		}
	}
	close(batches)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return context.Cause(ctx)
	}
}

// qbFill appends n items of qItemBytes under p, named prefix + sequence.
func qbFill(ctx context.Context, c *zk.Conn, p, prefix string, n int) error {
	item := make([]byte, qItemBytes)
	ops := make([]any, n)
	for i := range ops {
		ops[i] = &zk.CreateRequest{Path: p + "/" + prefix, Data: item, Acl: zk.WorldACL(zk.PermAll), Flags: zk.FlagSequence}
	}
	return qbMultis(ctx, c, ops)
}

// qbDeleteChildren deletes the last n children of p in name order (all of
// them when n < 0), which are its newest items when they share one
// prefix, and returns how many it deleted. The children must have none.
func qbDeleteChildren(ctx context.Context, c *zk.Conn, p string, n int) (int, error) {
	var names []string
	err := qbCall(ctx, func() (err error) {
		names, _, err = c.Children(p)
		return err
	})
	if errors.Is(err, zk.ErrNoNode) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	slices.Sort(names)
	if n >= 0 && n < len(names) {
		names = names[len(names)-n:]
	}
	ops := make([]any, len(names))
	for i, name := range names {
		ops[i] = &zk.DeleteRequest{Path: p + "/" + name, Version: -1}
	}
	return len(ops), qbMultis(ctx, c, ops)
}

// qbDeleteTree deletes p and everything under it.
func qbDeleteTree(ctx context.Context, c *zk.Conn, p string) error {
	var names []string
	err := qbCall(ctx, func() (err error) {
		names, _, err = c.Children(p)
		return err
	})
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := qbDeleteTree(ctx, c, p+"/"+name); err != nil {
			return err
		}
	}
	err = qbCall(ctx, func() error { return c.Delete(p, -1) })
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}

// qbSettle waits until the counter has seen no request or notification for
// 300 ms (background requests of the last operation belong to it), at most
// 5 s.
func qbSettle(ctx context.Context, c *zkcount.Counter) {
	const quiet, most, poll = 300 * time.Millisecond, 5 * time.Second, 20 * time.Millisecond
	sum := func() int64 { s := c.Snapshot(); return s.Total() + s.Notifications }
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
