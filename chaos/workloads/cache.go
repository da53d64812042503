package workloads

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/cache"
	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Cache is the workload of package cache: every client (each on its own
// link and session) runs a TreeCache of <root>/tree, and two writers,
// on sessions of their own through the ensemble's default link (which
// client faults leave alone), change the tree in rounds: for a while each
// creates, sets and deletes nodes at random in a subtree of its own, down
// to three levels below the root; then both pause, the workload reads the
// tree directly (a sync, then every node's data and stat: the truth), and
// every cache client waits until its cache's view equals the truth (the
// same paths, each with the same Czxid, Mzxid and data) for at most Bound: a
// converge operation, ok with the lag or failed with the differences. A
// truth that a write applied late (its answer lost to a server fault) can
// make stale is read again once halfway through the wait. Every event a
// cache delivers is recorded (history.KindCacheEvent).
//
// Checked by cache-converges (rounds in quiet time converge within Bound;
// per cache and path, the Mzxid of added and updated events only grows)
// and liveness.
//
// With Mutant set, the caches skip what they read again after a
// reconnection (hooks.SetCacheSkipReread): a read lost with the connection
// set no watch, and the node stays stale and unwatched. Faults that drop
// connections while reads are in flight (limit-data) expose it; without
// a lost read the mutant is correct. The mutant is a separate scenario
// family, "cache-reread-mutant", with the faithful cache as its twin
// "cache-reread".
type Cache struct {
	// Mutant skips the re-read after a reconnection (see above).
	Mutant bool
	// Twin names the workload "cache-reread" (the mutant's twin).
	Twin bool
	// Bound is how long a cache may take to equal the truth. Default: half
	// the liveness bound, a session timeout + 2.5 s by default (see
	// Checkers).
	Bound time.Duration
	// Write is how long each round's writers write; Pace the pause between
	// two writes of one writer. Default 300 ms and 10 ms.
	Write, Pace time.Duration
}

// Name is "cache", or "cache-reread-mutant" and its twin "cache-reread".
func (w *Cache) Name() string {
	if w.Mutant || w.Twin {
		return mutantName("cache-reread", w.Mutant)
	}
	return "cache"
}

// QuickFaults names the cache workload's quick-tier faults, or the
// mutant's.
func (w *Cache) QuickFaults() []string {
	if w.Mutant || w.Twin {
		return mutantFaults["cache-reread"]
	}
	return quickFaults["cache"]
}

// bound is Bound, or half the liveness bound: a few round trips once the
// cache's session is usable (a reconnection re-reads every node; a new
// session syncs first), with room for a loaded machine, and short enough
// that a round starting after the last heal is judged inside the history
// (the runner goes on for a whole liveness bound while a client makes no
// progress, as a cache that does not converge does not).
func (w *Cache) bound(liveness time.Duration) time.Duration {
	if w.Bound > 0 {
		return w.Bound
	}
	return liveness / 2
}

// SlowStart is true: the first fault waits for the caches to run
// (workloads.SlowStarter).
func (w *Cache) SlowStart() bool { return true }

// Checkers: cache-converges, liveness.
func (w *Cache) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.CacheConverges(), checkers.Liveness(cfg.LivenessBound)}
}

// Run makes <root>/tree with a subtree per writer, starts a TreeCache per
// client, and runs rounds until ctx is done.
func (w *Cache) Run(ctx context.Context, env *cluster.Env) error {
	write, pace := w.Write, w.Pace
	if write == 0 {
		write = 300 * time.Millisecond
	}
	if pace == 0 {
		pace = 10 * time.Millisecond
	}
	bound := w.bound(2*env.SessionTimeout + 5*time.Second)
	if w.Mutant {
		if !hooks.Enabled {
			return ErrNeedsHooks
		}
		defer hooks.SetCacheSkipReread(true)()
	}
	tree := env.Root + "/tree"
	var writers []*treeWriter
	for i := range 2 {
		conn, err := env.ConnectSetup(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		tw := &treeWriter{conn: conn, acl: env.ACL(), root: fmt.Sprintf("%s/w%d", tree, i+1), rng: rand.New(rand.NewPCG(uint64(i+1), 7))}
		writers = append(writers, tw)
	}
	acl := env.ACL()
	if _, err := writers[0].conn.Multi(&zk.CreateRequest{Path: tree, Acl: acl},
		&zk.CreateRequest{Path: writers[0].root, Acl: acl}, &zk.CreateRequest{Path: writers[1].root, Acl: acl}); err != nil {
		return fmt.Errorf("chaos: cache setup: %w", err)
	}
	var caches []*treeReader
	defer func() {
		for _, r := range caches {
			r.close(env.SessionTimeout)
		}
	}()
	for i := range env.Clients {
		c, err := env.NewClient(fmt.Sprintf("c%d", i+1))
		if err != nil {
			return err
		}
		s, err := connectRecipes(ctx, env, c)
		if s == nil {
			return err
		}
		r, err := startReader(ctx, c, s, tree)
		if err != nil {
			closeRecipes(s, env.SessionTimeout)
			return err
		}
		caches = append(caches, r)
	}
	for round := int64(1); ctx.Err() == nil; round++ {
		var wg sync.WaitGroup
		for _, tw := range writers {
			wg.Add(1)
			go func() { defer wg.Done(); tw.run(ctx, write, pace) }()
		}
		wg.Wait()
		truth, err := readTruth(ctx, writers[0].conn, tree)
		if err != nil {
			break // ctx is done
		}
		for _, r := range caches {
			wg.Add(1)
			go func() { defer wg.Done(); r.converge(ctx, round, truth, bound, writers[0].conn) }()
		}
		wg.Wait()
	}
	return nil
}

// treeWriter changes the subtree at root: creates (at most three levels
// below the tree), sets and deletes at random. It knows its subtree from
// a walk at the start of each round (a write whose answer was lost may or
// may not have been applied).
type treeWriter struct {
	conn  *zk.Conn
	acl   []zk.ACL // of the nodes it creates (cluster.Env.ACL)
	root  string
	rng   *rand.Rand
	paths []string // the subtree's nodes below root
	next  int
}

func (tw *treeWriter) run(ctx context.Context, d, pace time.Duration) {
	tw.paths = tw.paths[:0]
	if err := cluster.Walk(tw.conn, tw.root, func(p string, _ *zk.Stat, _ []byte) {
		if p != tw.root {
			tw.paths = append(tw.paths, p)
		}
	}); err != nil {
		cluster.Sleep(ctx, d) // the ensemble is not serving: try next round
		return
	}
	end := time.Now().Add(d)
	for time.Now().Before(end) && ctx.Err() == nil {
		tw.step()
		if !cluster.Sleep(ctx, pace) {
			return
		}
	}
}

// step makes one random change: a set (40%), a create under a node less
// than three levels deep (35%), or the delete of a leaf (25%).
func (tw *treeWriter) step() {
	tw.next++
	data := []byte(fmt.Sprintf("v%d", tw.next))
	switch x := tw.rng.IntN(100); {
	case x < 40 && len(tw.paths) > 0:
		p := tw.paths[tw.rng.IntN(len(tw.paths))]
		_, _ = tw.conn.Set(p, data, -1)
	case x < 75 || len(tw.paths) == 0:
		parents := []string{tw.root}
		for _, p := range tw.paths {
			if strings.Count(strings.TrimPrefix(p, tw.root), "/") < 3 {
				parents = append(parents, p)
			}
		}
		p := fmt.Sprintf("%s/n%d", parents[tw.rng.IntN(len(parents))], tw.next)
		if _, err := tw.conn.Create(p, data, 0, tw.acl); err == nil {
			tw.paths = append(tw.paths, p)
		}
	default:
		i := tw.rng.IntN(len(tw.paths))
		p := tw.paths[i]
		for _, q := range tw.paths {
			if strings.HasPrefix(q, p+"/") {
				return // not a leaf
			}
		}
		if err := tw.conn.Delete(p, -1); err == nil || errors.Is(err, zk.ErrNoNode) {
			tw.paths = append(tw.paths[:i], tw.paths[i+1:]...)
		}
	}
}

// truthNode is a node of the tree as ZooKeeper has it: its incarnation
// (czxid), its last change (mzxid) and its data.
type truthNode struct {
	czxid, mzxid int64
	data         []byte
}

// readTruth syncs conn's server and reads the tree at root, retrying
// until it succeeds or ctx is done.
func readTruth(ctx context.Context, conn *zk.Conn, root string) (map[string]truthNode, error) {
	for {
		truth := map[string]truthNode{}
		_, err := conn.Sync(root)
		if err == nil {
			err = cluster.Walk(conn, root, func(p string, st *zk.Stat, data []byte) {
				truth[p] = truthNode{czxid: st.Czxid, mzxid: st.Mzxid, data: data}
			})
		}
		if err == nil {
			return truth, nil
		}
		if !cluster.Sleep(ctx, 50*time.Millisecond) {
			return nil, ctx.Err()
		}
	}
}

// treeReader is one client's cache (a TreeCache, or a ChildrenCache) and
// the goroutine that records its events.
type treeReader struct {
	c      *cluster.Client
	s      *recipes.Session
	path   string                                                                 // the cache's root
	nodes  func() []cache.Node                                                    // the cache's view
	truth  func(ctx context.Context, conn *zk.Conn) (map[string]truthNode, error) // what the view must equal
	stream *recipes.Stream[cache.Event]
	done   chan struct{}
}

// startReader starts a TreeCache of tree on s and records its events.
func startReader(ctx context.Context, c *cluster.Client, s *recipes.Session, tree string) (*treeReader, error) {
	tc, err := cache.NewTreeCache(s, tree)
	if err != nil {
		return nil, err
	}
	truth := func(ctx context.Context, conn *zk.Conn) (map[string]truthNode, error) {
		return readTruth(ctx, conn, tree)
	}
	return recordReader(ctx, &treeReader{c: c, s: s, path: tree, nodes: tc.Nodes, truth: truth, stream: tc.Watch(context.WithoutCancel(ctx))}), nil
}

// recordReader records the events of r's stream on a goroutine of its own.
func recordReader(ctx context.Context, r *treeReader) *treeReader {
	c := r.c
	r.done = make(chan struct{})
	go func() {
		defer close(r.done)
		for ev := range r.stream.C {
			e := history.Event{Kind: history.KindCacheEvent, Key: ev.Node.Path, Detail: ev.Type.String()}
			if ev.Type == cache.EventAdded || ev.Type == cache.EventUpdated {
				e.Value, e.Arg = ev.Node.Stat.Mzxid, ev.Node.Stat.Czxid
			}
			c.Log.Event(e)
		}
		if err := r.stream.Err(); err != nil {
			c.Log.Event(history.Event{Kind: history.KindCacheEvent, Detail: "ended: " + err.Error()})
		}
	}()
	return r
}

func (r *treeReader) close(st time.Duration) {
	r.stream.Stop()
	<-r.done
	closeRecipes(r.s, st)
}

// converge waits until the cache's view equals truth, for at most bound;
// halfway through it reads the truth again once (through conn).
func (r *treeReader) converge(ctx context.Context, round int64, truth map[string]truthNode, bound time.Duration, conn *zk.Conn) {
	op := r.c.Log.Invoke(history.FnConverge, r.path, round)
	start := time.Now()
	reread := false
	for {
		diff := viewDiff(r.nodes(), truth)
		if diff == "" {
			op.OK(time.Since(start).Milliseconds())
			return
		}
		if time.Since(start) > bound {
			op.Fail(diff)
			return
		}
		if !reread && time.Since(start) > bound/2 {
			reread = true
			if t, err := r.truth(ctx, conn); err == nil {
				truth = t
			}
		}
		if !cluster.Sleep(ctx, 10*time.Millisecond) {
			return // the outcome stays open: the run ended
		}
	}
}

// viewDiff describes how view differs from truth (at most three paths),
// or returns "".
func viewDiff(view []cache.Node, truth map[string]truthNode) string {
	var diffs []string
	seen := map[string]bool{}
	for _, n := range view {
		seen[n.Path] = true
		t, ok := truth[n.Path]
		switch {
		case !ok:
			diffs = append(diffs, n.Path+" cached, not in ZooKeeper")
		case t.czxid != n.Stat.Czxid:
			diffs = append(diffs, fmt.Sprintf("%s cached as the incarnation of czxid 0x%x (%q), ZooKeeper has czxid 0x%x (%q)", n.Path, n.Stat.Czxid, n.Data, t.czxid, t.data))
		case t.mzxid != n.Stat.Mzxid || !bytes.Equal(t.data, n.Data):
			diffs = append(diffs, fmt.Sprintf("%s cached at mzxid 0x%x (%q), ZooKeeper has 0x%x (%q)", n.Path, n.Stat.Mzxid, n.Data, t.mzxid, t.data))
		}
	}
	for p := range truth {
		if !seen[p] {
			diffs = append(diffs, p+" in ZooKeeper, not cached")
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	sort.Strings(diffs)
	n := len(diffs)
	if n > 3 {
		diffs = diffs[:3]
	}
	return fmt.Sprintf("%d difference(s): %s", n, strings.Join(diffs, "; "))
}
