package scale

// What the lock and elect series share: one implementation's driver behind
// a counting proxy with many sessions, the series' own session to the
// servers (paths, queue checks), quiet counters, a time budget per
// implementation, and notes on how a curve grows.

import (
	"context"
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/lab/bench"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
)

// minManyTimeout is the least session timeout of the lock and elect series.
// They keep up to 1,000 sessions open at once on a 2-core machine shared
// with three servers and the peers' runtimes (Python's interpreter lock
// serializes kazoo's ping threads): at zkbench's default of 3 s, a
// session whose pings come late on such a machine is expired in the middle
// of a run. No figure depends on it (nothing waits for an expiry).
const minManyTimeout = 15 * time.Second

// manyTimeout is the session timeout the lock and elect series use.
func manyTimeout(env *Env) time.Duration { return max(env.SessionTimeout, minManyTimeout) }

// contest is one implementation's driver, its clients connected through a
// counting proxy of their own, with the time it took to open them.
type contest struct {
	impl     string
	proxy    *bench.Proxy
	drv      bench.Driver
	opened   int           // sessions opened by open (client 0 excluded)
	openTook time.Duration // the time those took
}

// startContest starts impl's driver (client 0 connected) behind a new
// counting proxy in front of the ensemble. close must be called.
func startContest(ctx context.Context, env *Env, impl string, timeout time.Duration) (*contest, error) {
	if err := bench.Available(impl); err != nil {
		return nil, err
	}
	factory, err := bench.Factory(impl)
	if err != nil {
		return nil, err
	}
	proxy, err := bench.NewProxy(env.Ensemble.Addrs(), zkcount.New())
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	drv, err := factory(sctx, proxy.ConnectString(), timeout)
	if err != nil {
		_ = proxy.Close()
		return nil, err
	}
	return &contest{impl: impl, proxy: proxy, drv: drv}, nil
}

func (c *contest) counter() *zkcount.Counter { return c.proxy.Counter() }

// open makes sure n clients are connected and times the new ones.
func (c *contest) open(ctx context.Context, n int) error {
	have := c.opened + 1
	if n <= have {
		return nil
	}
	t0 := time.Now()
	if err := c.drv.Open(ctx, n); err != nil {
		return err
	}
	c.openTook += time.Since(t0)
	c.opened += n - have
	return nil
}

// perSession is the mean time open took per session (a guess of 20 ms
// before any was opened).
func (c *contest) perSession() time.Duration {
	if c.opened == 0 {
		return 20 * time.Millisecond
	}
	return c.openTook / time.Duration(c.opened)
}

// closeCost guesses how long closing n sessions takes: half of opening
// them (a close is one request and no handshake).
func (c *contest) closeCost(n int) time.Duration { return c.perSession() * time.Duration(n) / 2 }

// close closes the driver (every session) and the proxy; it returns how
// long that took.
func (c *contest) close(ctx context.Context) time.Duration {
	t0 := time.Now()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	_ = c.drv.Close(cctx)
	_ = c.proxy.Close()
	return time.Since(t0)
}

// dialAdmin opens the series' own session, straight to the servers
// (never counted).
func dialAdmin(ctx context.Context, env *Env) (*zk.Conn, error) {
	return dialAddrs(ctx, env.Ensemble.DirectAddrs(), manyTimeout(env))
}

// dialAddrs connects a go-zookeeper session to addrs.
func dialAddrs(ctx context.Context, addrs []string, timeout time.Duration) (*zk.Conn, error) {
	conn, ev, err := zk.Connect(addrs, timeout, zk.WithLogInfo(false), zk.WithLogger(silent{}))
	if err != nil {
		return nil, fmt.Errorf("scale: connect: %w", err)
	}
	connected := make(chan struct{})
	go func() {
		done := false
		for e := range ev {
			if e.State == zk.StateHasSession && !done {
				close(connected)
				done = true
			}
		}
	}()
	select {
	case <-connected:
		return conn, nil
	case <-ctx.Done():
		conn.Close()
		return nil, fmt.Errorf("scale: connect: %w", context.Cause(ctx))
	}
}

// warmUp runs create/list/read/delete cycles on every server before
// anything is measured, so that the first implementation measured does not
// pay for the servers' JIT warm-up (as zkbench's own warm-up does).
func warmUp(ctx context.Context, env *Env, conn *zk.Conn, p string) error {
	if err := ensurePath(conn, p); err != nil {
		return err
	}
	defer removeTree(conn, p)
	for _, addr := range env.Ensemble.DirectAddrs() {
		c, err := dialAddrs(ctx, []string{addr}, manyTimeout(env))
		if err != nil {
			return err
		}
		for range 200 {
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
			if err == nil {
				err = ctx.Err()
			}
			if err != nil {
				c.Close()
				return fmt.Errorf("scale: warm-up: %w", err)
			}
		}
		c.Close()
	}
	return nil
}

type silent struct{}

func (silent) Printf(string, ...any) {}

// removeTree deletes p and everything under it, as far as it can (nodes of
// sessions still open may come back; they go with their sessions).
func removeTree(conn *zk.Conn, p string) {
	children, _, err := conn.Children(p)
	if err != nil {
		return
	}
	for _, c := range children {
		removeTree(conn, path.Join(p, c))
	}
	_ = conn.Delete(p, -1)
}

// waitChildren waits until p has n children (participants queued), then
// until c has been quiet.
func waitChildren(ctx context.Context, conn *zk.Conn, p string, n int, c *zkcount.Counter) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second+time.Duration(n)*20*time.Millisecond)
	defer cancel()
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		children, _, err := conn.Children(p)
		if err == nil && len(children) == n {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("scale: %d participants never queued on %s (have %d, %v)", n, p, len(children), err)
		case <-t.C:
		}
	}
	quiet(ctx, c)
	return nil
}

// quiet waits until c has counted no request or notification for 300 ms
// (background requests of the last operation, such as a watch set after
// acquiring, belong to it), at most 5 s. Pings do not count.
func quiet(ctx context.Context, c *zkcount.Counter) {
	const still, most, poll = 300 * time.Millisecond, 5 * time.Second, 20 * time.Millisecond
	sum := func() int64 {
		s := c.Snapshot()
		return s.Total() + s.Notifications
	}
	last, since, end := sum(), time.Now(), time.Now().Add(most)
	t := time.NewTicker(poll)
	defer t.Stop()
	for time.Now().Before(end) && time.Since(since) < still {
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

// listBytes is what the children listings of d brought back (replies to
// getChildren and getChildren2, length prefixes included).
func listBytes(d zkcount.Counts) int64 {
	return d.ReplyBytes[zkcount.OpGetChildren] + d.ReplyBytes[zkcount.OpGetChildren2]
}

// perOp formats d's requests by op, divided by n ("create 1, delete 1").
func perOp(d zkcount.Counts, n float64) string {
	var parts []string
	for _, o := range slices.Sorted(maps.Keys(d.Requests)) {
		parts = append(parts, fmt.Sprintf("%s %.2f", o, float64(d.Requests[o])/n))
	}
	return strings.Join(parts, ", ")
}

// implShare divides what is left of the series' budget among the
// implementations still to run, so that time one does not use goes to the
// next.
func implShare(env *Env, start time.Time, left int) time.Duration {
	return max(0, env.Budget-time.Since(start)) / time.Duration(max(1, left))
}

// growthNotes says, per curve of f with two points or more, how the metric
// changed from the smallest size measured to the largest, and the exponent
// of a power law through those two points (0: constant, 1: linear in the
// size).
func growthNotes(f Figure) []string {
	var out []string
	for _, c := range f.Curves {
		var ps []Point
		for _, p := range c.Points {
			if p.X > 0 && p.Y > 0 {
				ps = append(ps, p)
			}
		}
		if len(ps) < 2 {
			continue
		}
		a, b := ps[0], ps[len(ps)-1]
		exp := math.Log(b.Y/a.Y) / math.Log(b.X/a.X)
		out = append(out, fmt.Sprintf("%s: %s at %s, %s at %s (as size^%.2f)", c.Impl, num(a.Y), num(a.X), num(b.Y), num(b.X), exp))
	}
	return out
}
