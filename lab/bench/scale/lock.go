package scale

import (
	"context"
	"fmt"
	"path"
	"time"

	"github.com/go-zookeeper/zk"
)

// The lock series: k contenders on one exclusive lock, each its own
// session looping acquire+release (Driver.Contend: zkrecipes lock.Mutex,
// go-zookeeper zk.Lock, Curator InterProcessMutex, kazoo Lock), for k on a
// 1-2-5 ladder from 2 to 1,000.
func init() { register(Series{Name: "lock", Share: 0.3, Run: runLock}) }

var (
	lockSizes = []int{2, 5, 10, 20, 50, 100, 200, 500, 1000}
	// lockRun is how long each size's contenders loop; each contender
	// finishes the cycle it is in, so a run lasts until the last of k
	// queued contenders has had its turn.
	lockRun      = 2 * time.Second
	lockRunQuick = 300 * time.Millisecond
)

func runLock(ctx context.Context, env *Env) ([]Figure, error) {
	sizes, run := lockSizes, lockRun
	if env.Quick {
		sizes, run = sizes[:2], lockRunQuick
	}
	timeout := manyTimeout(env)
	conn, err := dialAdmin(ctx, env)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	base := fmt.Sprintf("/scale-lock-%d", time.Now().UnixNano())
	defer removeTree(conn, base)
	if err := warmUp(ctx, env, conn, base+"/warm-up"); err != nil {
		return nil, err
	}

	reqs := Figure{Name: "lock-requests-per-handoff", Title: "Lock: requests per handoff",
		XLabel: "contenders", YLabel: "requests per acquire+release"}
	bytes := Figure{Name: "lock-list-bytes-per-handoff", Title: "Lock: bytes of children listings per handoff",
		XLabel: "contenders", YLabel: "bytes received per acquire+release"}
	ms := Figure{Name: "lock-ms-per-handoff", Title: "Lock: time per handoff",
		XLabel: "contenders", YLabel: "ms per acquire+release"}
	start := time.Now()
	for i, impl := range env.Impls {
		r, b, m := lockImpl(ctx, env, conn, base, impl, sizes, run, timeout, implShare(env, start, len(env.Impls)-i))
		reqs.Curves = append(reqs.Curves, r)
		bytes.Curves = append(bytes.Curves, b)
		ms.Curves = append(ms.Curves, m)
		if ctx.Err() != nil {
			break
		}
	}
	common := fmt.Sprintf("A point: k contenders, each its own session (timeout %s), loop acquire+release "+
		"on one lock for %s, nothing done while holding; every contender finishes the cycle it is in, so "+
		"each one cycles at least once. A handoff is one acquire+release cycle; requests and bytes are "+
		"counted on the wire by a proxy in front of the ensemble, over the whole run, and divided by the cycles.",
		timeout, run)
	reqs.Notes = append([]string{common,
		"Requests of every op (pings excluded). A lock that wakes only the next waiter costs the same per " +
			"cycle at any k. zkrecipes: 1 create + 1 getChildren + 1 delete alone (3); a waiter adds 1 getData " +
			"(the watch on the node ahead) and, when that node goes, makes sure the others that were ahead at " +
			"its listing are gone too: 1 getData each when two or fewer were, else 1 more getChildren " +
			"(recipes.Acquire), so 5 once the line is long. go-zookeeper's zk.Lock and Curator list again after " +
			"every wake (5); kazoo 2.8 also lists once more at each acquire after the first (6). Growth with k " +
			"would mean more than one waiter wakes per release (a herd)."},
		growthNotes(reqs)...)
	bytes.Notes = append([]string{common,
		"Replies to getChildren and getChildren2 only. Each acquire lists the lock's children at least " +
			"once, and all k contenders are queued, so a listing carries about k names of 40 to 60 bytes: " +
			"linear in k is the floor of this protocol. A second listing per cycle (after the wake) doubles " +
			"it; a herd would make it grow as k squared. A curve under the line at the largest k means the " +
			"line never held all k at once: the Java and Python peers start one thread per contender, and " +
			"on 2 cores the last ones start seconds after the first, when those have had their turn."},
		growthNotes(bytes)...)
	ms.Notes = append([]string{common,
		"Wall time of the run divided by the cycles done, on a shared 2-core machine: the rate at which " +
			"the lock changes hands. A handoff is the holder's delete, the notification to the one waiter " +
			"watching it, and that waiter's own check (a getData or a second listing) before it holds; a " +
			"rise with k is what the server and the clients do per cycle with listings of k names, and the " +
			"clients' thousands of threads (peers)."},
		growthNotes(ms)...)
	return []Figure{reqs, bytes, ms}, ctx.Err()
}

// lockImpl measures impl at each size in turn, its sessions opened as the
// sizes grow and kept, until the sizes end, the next would not fit budget,
// or a run fails. The three curves share one note.
func lockImpl(ctx context.Context, env *Env, conn *zk.Conn, base, impl string, sizes []int,
	run, timeout, budget time.Duration) (reqs, bytes, ms Curve) {
	reqs, bytes, ms = Curve{Impl: impl}, Curve{Impl: impl}, Curve{Impl: impl}
	var note string
	defer func() { reqs.Note, bytes.Note, ms.Note = note, note, note }()
	t0 := time.Now()
	c, err := startContest(ctx, env, impl, timeout)
	if err != nil {
		note = fmt.Sprintf("not run: %v", err)
		return
	}
	defer func() {
		took := c.close(ctx)
		env.Logf("lock %s: closed %d sessions in %s", impl, c.opened+1, took.Round(time.Millisecond))
	}()
	var last struct {
		k      int
		perCyc time.Duration // wall time per cycle
	}
	for i, k := range sizes {
		if i > 0 {
			// Opening the new sessions, the run (at least one turn of each
			// of k contenders, at the last size's pace), counting, and
			// closing k sessions at the end.
			est := c.perSession()*time.Duration(k-last.k) + max(run, last.perCyc*time.Duration(k)*3/2) +
				time.Second + c.closeCost(k)
			if left := budget - time.Since(t0); est > left {
				note = fmt.Sprintf("stopped after %d contenders: %d would take about %s, more than the %s left of its %s",
					last.k, k, est.Round(time.Second), left.Round(time.Second), budget.Round(time.Second))
				return
			}
		}
		p := path.Join(base, impl, fmt.Sprint(k))
		if err := ensurePath(conn, p); err != nil {
			note = fmt.Sprintf("stopped at %d contenders: %v", k, err)
			return
		}
		octx, cancel := context.WithTimeout(ctx, max(2*time.Minute, 4*c.perSession()*time.Duration(k)))
		err := c.open(octx, k)
		cancel()
		if err != nil {
			note = fmt.Sprintf("stopped at %d contenders: opening their sessions failed: %v", k, err)
			return
		}
		quiet(ctx, c.counter())
		before := c.counter().Snapshot()
		rctx, cancel := context.WithTimeout(ctx, max(5*run+30*time.Second, 5*last.perCyc*time.Duration(k)))
		cycles, el, err := c.drv.Contend(rctx, p, run, k)
		cancel()
		quiet(ctx, c.counter())
		d := c.counter().Snapshot().Sub(before)
		if err == nil && (cycles == 0 || el <= 0) {
			err = fmt.Errorf("no cycle completed")
		}
		if err != nil {
			note = fmt.Sprintf("stopped at %d contenders: %v", k, err)
			return
		}
		n := float64(cycles)
		x := float64(k)
		reqs.Points = append(reqs.Points, Point{x, float64(d.Total()) / n})
		bytes.Points = append(bytes.Points, Point{x, float64(listBytes(d)) / n})
		ms.Points = append(ms.Points, Point{x, float64(el) / 1e6 / n})
		last.k, last.perCyc = k, el/time.Duration(cycles)
		env.Logf("lock %s k=%d: %d cycles in %s; per cycle %.2f requests (%s), %.0f list bytes, %.2f notifications, %.3f ms; sessions opened in %s so far",
			impl, k, cycles, el.Round(time.Millisecond), float64(d.Total())/n, perOp(d, n),
			float64(listBytes(d))/n, float64(d.Notifications)/n, float64(el)/1e6/n, c.openTook.Round(time.Millisecond))
	}
	return
}
