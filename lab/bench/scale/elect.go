package scale

import (
	"context"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/lab/bench"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
)

// The elect series: n participants in one leader election, each its own
// session (Driver.ElectJoin: zkrecipes leader.Election, Curator
// LeaderLatch, kazoo Election; go-zookeeper has none), for n on a 1-2-5
// ladder from 2 to 500; the leader resigns, and the series measures the
// time until the next one leads and the requests the handoff cost, as the
// leader workload (lab/bench/leader.go) does for two participants.
func init() { register(Series{Name: "elect", Share: 0.2, Run: runElect}) }

var (
	electSizes = []int{2, 5, 10, 20, 50, 100, 200, 500}
	// electRounds is the handoffs measured per size.
	electRounds      = 5
	electRoundsQuick = 2
)

func runElect(ctx context.Context, env *Env) ([]Figure, error) {
	sizes, rounds := electSizes, electRounds
	if env.Quick {
		sizes, rounds = sizes[:2], electRoundsQuick
	}
	timeout := manyTimeout(env)
	conn, err := dialAdmin(ctx, env)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	base := fmt.Sprintf("/scale-elect-%d", time.Now().UnixNano())
	defer removeTree(conn, base)
	if err := warmUp(ctx, env, conn, base+"/warm-up"); err != nil {
		return nil, err
	}

	lat := Figure{Name: "elect-ms-to-new-leader", Title: "Election: time to a new leader after the leader resigns",
		XLabel: "participants", YLabel: "ms (median)"}
	reqs := Figure{Name: "elect-requests-per-handoff", Title: "Election: requests per handoff",
		XLabel: "participants", YLabel: "requests per resignation"}
	bytes := Figure{Name: "elect-list-bytes-per-handoff", Title: "Election: bytes of children listings per handoff",
		XLabel: "participants", YLabel: "bytes received per resignation"}
	start := time.Now()
	// go-zookeeper has no election (its driver says so at once): it takes
	// no share of the budget.
	left := 0
	for _, impl := range env.Impls {
		if impl != bench.ImplGoZK {
			left++
		}
	}
	for _, impl := range env.Impls {
		l, r, b := electImpl(ctx, env, conn, base, impl, sizes, rounds, timeout, implShare(env, start, left))
		if impl != bench.ImplGoZK {
			left--
		}
		lat.Curves = append(lat.Curves, l)
		reqs.Curves = append(reqs.Curves, r)
		bytes.Curves = append(bytes.Curves, b)
		if ctx.Err() != nil {
			break
		}
	}
	common := fmt.Sprintf("A point: n participants of one election, each its own session (timeout %s), "+
		"all queued; the leader resigns %d times, and after each handoff joins again at the back of the "+
		"line (its rejoining is not counted). Requests and bytes are counted on the wire by a proxy in front of "+
		"the ensemble from just before the resignation until every session has been quiet for 300 ms, over "+
		"all n sessions; the time runs from just before the resign call to the next participant's being told "+
		"it leads (as in zkbench's leader-resign).", timeout, rounds)
	lat.Notes = append([]string{common,
		"The median of the handoffs. Only the participant right behind the leader should act: a rise " +
			"with n is the server's or the client's work per participant (listing n names, waking more " +
			"than one)."},
		growthNotes(lat)...)
	reqs.Notes = append([]string{common,
		"The mean over the handoffs, all sessions' requests (pings excluded). zkrecipes: the leader's delete, " +
			"then its successor's owner check, which is also its term watch (1 getData, recipes.Holding.Check); " +
			"with more than 2 participants the successor also makes sure that those ahead of it at its last listing " +
			"are gone, with 1 getData each when two or fewer were, else 1 getChildren (recipes.Acquire): 2 to 4, " +
			"depending on where the " +
			"successor stood when it last listed, not on n. Curator's LeaderLatch and kazoo's Election: the " +
			"delete and the successor's getChildren. Growth with n would mean more than the successor wakes."},
		growthNotes(reqs)...)
	bytes.Notes = append([]string{common,
		"Replies to getChildren and getChildren2 only, mean over the handoffs. A successor that lists the " +
			"election's children to learn it leads receives n names: linear in n; a herd would make it " +
			"quadratic."},
		growthNotes(bytes)...)
	return []Figure{lat, reqs, bytes}, ctx.Err()
}

// electImpl measures impl at each size in turn: participants join at the
// back as the sizes grow and stay, until the sizes end, the next would not
// fit budget, or a handoff fails. The three curves share one note.
func electImpl(ctx context.Context, env *Env, conn *zk.Conn, base, impl string, sizes []int, rounds int,
	timeout, budget time.Duration) (lat, reqs, bytes Curve) {
	lat, reqs, bytes = Curve{Impl: impl}, Curve{Impl: impl}, Curve{Impl: impl}
	var note string
	defer func() { lat.Note, reqs.Note, bytes.Note = note, note, note }()
	t0 := time.Now()
	c, err := startContest(ctx, env, impl, timeout)
	if err != nil {
		note = fmt.Sprintf("not run: %v", err)
		return
	}
	defer func() {
		took := c.close(ctx)
		env.Logf("elect %s: closed %d sessions in %s", impl, c.opened+1, took.Round(time.Millisecond))
	}()
	p := path.Join(base, impl)
	if err := ensurePath(conn, p); err != nil {
		note = fmt.Sprintf("not run: %v", err)
		return
	}
	step := func(d time.Duration) (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, d) }
	// The first participant leads alone.
	err = c.drv.ElectJoin(ctx, p, 0)
	if errors.Is(err, bench.ErrUnsupported) {
		note = "no election recipe in the library"
		return
	}
	leader := 0
	if err == nil {
		sctx, cancel := step(30 * time.Second)
		leader, _, err = c.drv.ElectAwait(sctx, 0)
		cancel()
	}
	if err != nil {
		note = fmt.Sprintf("not run: the first participant never led: %v", err)
		return
	}
	joined := 1
	var perJoin, perRound time.Duration // measured at the last size
	lastSize := 0
	for i, n := range sizes {
		if i > 0 {
			// Opening and joining the new participants, the rounds at the
			// last size's pace (a round waits for quiet twice), and
			// closing n sessions at the end.
			est := (c.perSession()+perJoin)*time.Duration(n-joined) + time.Duration(rounds)*perRound*3/2 + c.closeCost(n)
			if left := budget - time.Since(t0); est > left {
				note = fmt.Sprintf("stopped after %d participants: %d would take about %s, more than the %s left of its %s",
					lastSize, n, est.Round(time.Second), left.Round(time.Second), budget.Round(time.Second))
				return
			}
		}
		octx, cancel := step(max(2*time.Minute, 4*c.perSession()*time.Duration(n)))
		err := c.open(octx, n)
		cancel()
		if err != nil {
			note = fmt.Sprintf("stopped at %d participants: opening their sessions failed: %v", n, err)
			return
		}
		tj := time.Now()
		for j := joined; j < n && err == nil; j++ {
			err = c.drv.ElectJoin(ctx, p, j)
		}
		if err == nil {
			err = waitChildren(ctx, conn, p, n, c.counter())
		}
		if err != nil {
			note = fmt.Sprintf("stopped at %d participants: joining: %v", n, err)
			return
		}
		if n > joined {
			perJoin = time.Since(tj) / time.Duration(n-joined)
		}
		joined = n
		tr := time.Now()
		var times []time.Duration
		total := zkcount.Counts{}
		for range rounds {
			var took time.Duration
			var d zkcount.Counts
			took, d, leader, err = electHandoff(ctx, conn, c, p, n, leader)
			if err != nil {
				break
			}
			times = append(times, took)
			total = addCounts(total, d)
		}
		if err != nil {
			note = fmt.Sprintf("stopped at %d participants: %v", n, err)
			return
		}
		perRound = time.Since(tr) / time.Duration(rounds)
		lastSize = n
		k, x := float64(len(times)), float64(n)
		med := bench.Percentile(times, 50)
		lat.Points = append(lat.Points, Point{x, float64(med) / 1e6})
		reqs.Points = append(reqs.Points, Point{x, float64(total.Total()) / k})
		bytes.Points = append(bytes.Points, Point{x, float64(listBytes(total)) / k})
		env.Logf("elect %s n=%d: median handoff %.3f ms (of %v); per handoff %.2f requests (%s), %.0f list bytes, %.2f notifications; a round took %s",
			impl, n, float64(med)/1e6, roundMs(times), float64(total.Total())/k, perOp(total, k),
			float64(listBytes(total))/k, float64(total.Notifications)/k, perRound.Round(time.Millisecond))
	}
	return
}

// electHandoff has leader resign and waits for the next to lead; it returns
// the time from just before the resignation to the new leader's being told,
// the counts of every session from just before the resignation until they
// were quiet, and the new leader. It is called with n participants queued
// and the counter quiet (waitChildren); the old leader then joins again at
// the back, outside the counted window, and the line is full and quiet
// again when it returns.
func electHandoff(ctx context.Context, conn *zk.Conn, c *contest, p string, n, leader int) (time.Duration, zkcount.Counts, int, error) {
	hctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	before := c.counter().Snapshot()
	t0, err := c.drv.ElectLeave(hctx, leader)
	if err != nil {
		return 0, zkcount.Counts{}, 0, fmt.Errorf("resign: %w", err)
	}
	next, t1, err := c.drv.ElectAwait(hctx, t0)
	if err != nil {
		return 0, zkcount.Counts{}, 0, fmt.Errorf("no new leader: %w", err)
	}
	if next == leader {
		return 0, zkcount.Counts{}, 0, fmt.Errorf("participant %d led again after resigning", leader)
	}
	quiet(hctx, c.counter())
	d := c.counter().Snapshot().Sub(before)
	if err := c.drv.ElectJoin(hctx, p, leader); err != nil {
		return 0, zkcount.Counts{}, 0, fmt.Errorf("rejoin: %w", err)
	}
	if err := waitChildren(hctx, conn, p, n, c.counter()); err != nil {
		return 0, zkcount.Counts{}, 0, err
	}
	return time.Duration(t1 - t0), d, next, nil
}

// addCounts adds b to a (requests, notifications, bytes).
func addCounts(a, b zkcount.Counts) zkcount.Counts {
	out := zkcount.Counts{Requests: map[zkcount.Op]int64{}, ReplyBytes: map[zkcount.Op]int64{},
		Notifications: a.Notifications + b.Notifications, BytesOut: a.BytesOut + b.BytesOut, BytesIn: a.BytesIn + b.BytesIn}
	for _, m := range []map[zkcount.Op]int64{a.Requests, b.Requests} {
		for o, v := range m {
			out.Requests[o] += v
		}
	}
	for _, m := range []map[zkcount.Op]int64{a.ReplyBytes, b.ReplyBytes} {
		for o, v := range m {
			out.ReplyBytes[o] += v
		}
	}
	return out
}

// roundMs lists durations in ms with 3 significant digits (progress lines).
func roundMs(ds []time.Duration) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = num(float64(d) / 1e6)
	}
	return out
}
