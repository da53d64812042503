package scale

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/lab/bench"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
)

// The barrier series: a double barrier of n members, from 2 to 500: the
// time until every member has entered, then until every member has left,
// and what each member costs on the wire.
//
// For each implementation (zkrecipes barrier.DoubleBarrier, Curator 5.4's
// DistributedDoubleBarrier, kazoo 2.8's DoubleBarrier: the drivers'
// BarrierEnter and BarrierLeave; go-zookeeper has none) and each n of the
// 1-2-5 ladder: n members, each its own barrier object on a goroutine or
// thread of its own, spread round-robin over min(n, barSessions) sessions
// of the implementation (client i%k), all enter together on a fresh
// barrier path (created beforehand by the harness, so that no member pays
// for it); once all have entered and the wire is quiet, all leave
// together. Both phases are counted through the implementation's proxy.

func init() {
	register(Series{Name: "barrier", Share: 0.1, Run: runBarrier})
}

// barSessions is how many sessions the members share at most. Members on
// one session share its connection and the server's watches (a server
// sends one notification per session and path, whatever the watchers):
// requests per member do not depend on it, notifications per member do.
const barSessions = 16

// barLadder is the 1-2-5 ladder of members.
var barLadder = []int{2, 5, 10, 20, 50, 100, 200, 500}

var barMetrics = []struct{ name, title, ylabel string }{
	{"barrier-enter-ms", "Double barrier: ms until all members entered vs members", "ms until the last entered"},
	{"barrier-leave-ms", "Double barrier: ms until all members left vs members", "ms until the last left"},
	{"barrier-enter-requests", "Double barrier enter: requests per member vs members", "requests per member (enter)"},
	{"barrier-leave-requests", "Double barrier leave: requests per member vs members", "requests per member (leave)"},
	{"barrier-bytes-in", "Double barrier: bytes received per member (enter and leave) vs members", "bytes received per member"},
}

type barImpl struct {
	impl   string
	points [5][]Point
	note   []string
}

func runBarrier(ctx context.Context, env *Env) ([]Figure, error) {
	ladder := barLadder
	if env.Quick {
		ladder = barLadder[:2]
	}
	admin, err := qbAdmin(ctx, env)
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	base := fmt.Sprintf("/zkscale-barrier-%d", time.Now().UnixNano())
	if err := qbEnsure(ctx, admin, base); err != nil {
		return nil, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := qbDeleteTree(cctx, admin, base); err != nil {
			env.Logf("scale: barrier: cleanup of %s: %v", base, err)
		}
	}()
	start := time.Now()
	var runs []*barImpl
	var todo []*barImpl
	for _, impl := range env.Impls {
		r := &barImpl{impl: impl}
		runs = append(runs, r)
		switch {
		case impl == bench.ImplGoZK:
			r.note = append(r.note, "no barrier recipe in the library")
		case bench.Available(impl) != nil:
			r.note = append(r.note, fmt.Sprintf("not run: %v", bench.Available(impl)))
		default:
			todo = append(todo, r)
		}
	}
	var errs []error
	for i, r := range todo {
		budget := (env.Budget - time.Since(start)) / time.Duration(len(todo)-i)
		if err := barRun(ctx, env, admin, path.Join(base, r.impl), r, ladder, budget); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.impl, err))
			r.note = append(r.note, fmt.Sprintf("failed: %v", qOneLine(err)))
		}
		if ctx.Err() != nil {
			break
		}
	}
	notes := []string{
		fmt.Sprintf("A point at n: n members of one double barrier for n, each its own barrier object on its own "+
			"goroutine or thread, spread round-robin over min(n, %d) sessions of the implementation, enter together; "+
			"once all have entered and the wire is quiet they leave together. Times run from the release to the last "+
			"member's return; requests and bytes are counted on the wire through the implementation's proxy and "+
			"divided by n. Every member lists the barrier's children to enter (n names), so the bytes a member "+
			"receives grow with n.", barSessions),
		"Leave is ZooKeeper's algorithm in all three: the lowest-named member waits for the highest to go, the " +
			"others delete their node and wait for the lowest; the lowest lists again each time it is woken.",
	}
	var growth []string
	for _, r := range runs {
		if b := r.points[4]; len(b) >= 2 {
			first, last := b[0], b[len(b)-1]
			growth = append(growth, fmt.Sprintf("%s %.0f B at %g members, %.0f B at %g (x%.1f for x%g members)",
				r.impl, first.Y, first.X, last.Y, last.X, last.Y/first.Y, last.X/first.X))
		}
	}
	if len(growth) > 0 {
		notes = append(notes, "Bytes received per member grow about in proportion to n once the listings dominate (from "+
			"about 50 members on), so the wire carries about n^2 bytes in all: every member lists the n members to "+
			"enter, and again (twice) to leave; requests per member stay flat. Per member: "+
			strings.Join(growth, "; ")+".")
	}
	var figs []Figure
	for i, m := range barMetrics {
		f := Figure{Name: m.name, Title: m.title, XLabel: "members", YLabel: m.ylabel, Notes: notes}
		for _, r := range runs {
			f.Curves = append(f.Curves, Curve{Impl: r.impl, Points: r.points[i], Note: strings.Join(r.note, "; ")})
		}
		figs = append(figs, f)
	}
	return figs, errors.Join(errs...)
}

// barRun climbs the ladder for one implementation within budget.
func barRun(ctx context.Context, env *Env, admin *zk.Conn, base string, r *barImpl, ladder []int, budget time.Duration) (err error) {
	env.Logf("scale: barrier: %s (budget %s)", r.impl, budget.Round(time.Second))
	t0 := time.Now()
	proxy, err := bench.NewProxy(env.Ensemble.Addrs(), zkcount.New())
	if err != nil {
		return err
	}
	defer proxy.Close()
	factory, err := bench.Factory(r.impl)
	if err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	drv, err := factory(sctx, proxy.ConnectString(), env.SessionTimeout)
	cancel()
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		err = errors.Join(err, drv.Close(cctx))
	}()
	c := proxy.Counter()
	var lastN int
	var lastStep time.Duration
	for i, n := range ladder {
		if i > 0 {
			// Linear in n, doubled: a member's listing grows with n too.
			est := 2 * time.Duration(float64(lastStep)*float64(n)/float64(lastN))
			if left := budget - time.Since(t0); est > left {
				r.note = append(r.note, fmt.Sprintf("stopped before %d members: that size would take about %s, %s of the budget left",
					n, est.Round(time.Second), left.Round(time.Second)))
				return nil
			}
		}
		step := time.Now()
		k := min(n, barSessions)
		p := path.Join(base, fmt.Sprintf("n%d", n))
		if err := qbEnsure(ctx, admin, p); err != nil {
			return err
		}
		octx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		err := drv.Open(octx, k)
		cancel()
		if err != nil {
			return fmt.Errorf("open %d sessions: %w", k, err)
		}
		// A phase's bound: far beyond what the last size took.
		bound := 30*time.Second + 10*time.Duration(float64(lastStep)*float64(n)/float64(max(lastN, 1)))

		qbSettle(ctx, c)
		before := c.Snapshot()
		pctx, cancel := context.WithTimeout(ctx, bound)
		enter, err := drv.BarrierEnter(pctx, p, n, k)
		cancel()
		qbSettle(ctx, c)
		de := c.Snapshot().Sub(before)
		if err != nil {
			r.note = append(r.note, fmt.Sprintf("enter failed at %d members: %s", n, qOneLine(err)))
			return nil
		}
		before = c.Snapshot()
		pctx, cancel = context.WithTimeout(ctx, bound)
		leave, err := drv.BarrierLeave(pctx)
		cancel()
		qbSettle(ctx, c)
		dl := c.Snapshot().Sub(before)
		if err != nil {
			r.note = append(r.note, fmt.Sprintf("leave failed at %d members: %s", n, qOneLine(err)))
			return nil
		}
		v := [5]float64{
			float64(enter) / float64(time.Millisecond), float64(leave) / float64(time.Millisecond),
			qbPer(de.Total(), n), qbPer(dl.Total(), n), qbPer(de.BytesIn+dl.BytesIn, n),
		}
		for j := range v {
			r.points[j] = append(r.points[j], Point{X: float64(n), Y: v[j]})
		}
		env.Logf("scale: barrier: %s at %d: enter %.1f ms %.2f req/member, leave %.1f ms %.2f req/member, %.0f B in/member, %.2f notif/member",
			r.impl, n, v[0], v[2], v[1], v[3], v[4], qbPer(de.Notifications+dl.Notifications, n))
		lastN, lastStep = n, time.Since(step)
	}
	return nil
}
