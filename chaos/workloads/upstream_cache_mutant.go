package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
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

// recreated is how many children of the CacheRecreate workload are
// deleted and created again at each cut of the target.
const recreated = 6

// CacheRecreate is the CURATOR-391 variant and its twin: every client (the
// target c1, which faults reach, and bystanders, which they do not) runs a
// cache.ChildrenCache of <root>/kids. Two writers, on sessions of their own
// through the ensemble's default link, keep the children: the round writer
// sets the "s" children and creates and deletes "t" children, in rounds as
// the cache workload's (write, then the truth read directly, then every
// cache must equal it within the bound: a converge operation); the aimed
// writer waits for the target's session to be cut off and then, while it
// is, deletes each of the "r" children and creates it again, ephemeral,
// owned by the other writer's session: back at version 0, the version the
// caches hold, with a new czxid, another ephemeral owner, and new data for
// half of them. It records that it did (history.KindAimHit) when the
// target was still cut off afterwards; the workload declares that step its
// aim at each fault that exposes the mutant (history.KindAim, one per
// QuickFaults), so a cut in which it did not happen leaves the scenario
// "not exercised" (checkers.Exercised), never passed. Nothing else
// touches the "r" children. Once the workload's context ends, a last round
// (the writers stopped, no fault on) judges every cache's final view.
//
// With Mutant set, the caches take a read whose version equals the cached
// one's for "nothing new" unless they saw the node's deletion event, as
// Curator's PathChildrenCache did before CURATOR-391 was fixed
// (hooks.SetCacheCompareVersion). A bystander sees each deletion event and
// is right; the target, cut off, sees none: go-zookeeper's restored
// watches report the re-created children changed, not deleted, and the
// re-read after the reconnection finds the versions it holds. It keeps the
// old incarnations for good: cache-converges catches every round after the
// heal (a view that differs from ZooKeeper's by czxid, mzxid and data) and
// the last one. The twin's cache compares czxids and reports each child
// removed and added again. Without a cut (latency-low) nothing is
// re-created and the mutant passes.
type CacheRecreate struct {
	Mutant bool
}

// Name is "cache-recreate-mutant", or "cache-recreate" for the twin.
func (w *CacheRecreate) Name() string { return mutantName("cache-recreate", w.Mutant) }

// QuickFaults names the faults that expose the cache-recreate mutant.
func (w *CacheRecreate) QuickFaults() []string { return mutantFaults["cache-recreate"] }

// Checkers: cache-converges, liveness (the cache workload's).
func (w *CacheRecreate) Checkers(cfg CheckConfig) []checkers.Checker {
	return (&Cache{}).Checkers(cfg)
}

// Run makes <root>/kids and its children, starts a ChildrenCache per
// client and runs rounds until ctx is done, then the last round.
func (w *CacheRecreate) Run(ctx context.Context, env *cluster.Env) error {
	if w.Mutant {
		if !hooks.Enabled {
			return ErrNeedsHooks
		}
		defer hooks.SetCacheCompareVersion(true)()
	}
	dir := env.Root + "/kids"
	var conns [2]*zk.Conn
	for i := range conns {
		conn, err := env.ConnectSetup(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		conns[i] = conn
	}
	acl := env.ACL()
	rc := &recreator{dir: dir, conns: conns, acl: acl}
	cw := &childWriter{conn: conns[0], acl: acl, dir: dir, rng: rand.New(rand.NewPCG(1, 7))}
	if err := rc.setup(cw); err != nil {
		return err
	}
	cs, closeLinks, err := mutantClients(env, 3, 1)
	if err != nil {
		return err
	}
	defer closeLinks()
	var readers []*treeReader
	defer func() {
		for _, r := range readers {
			r.close(env.SessionTimeout)
		}
	}()
	for _, c := range cs {
		s, err := connectRecipes(ctx, env, c)
		if s == nil {
			return err
		}
		r, err := startChildrenReader(ctx, c, s, dir)
		if err != nil {
			closeRecipes(s, env.SessionTimeout)
			return err
		}
		readers = append(readers, r)
	}
	for _, f := range w.QuickFaults() { // the faults that cut c1 off; none under a mild one
		cs[0].Log.Event(history.Event{Kind: history.KindAim, Key: f,
			Detail: fmt.Sprintf("%d children of %s deleted and created again while c1 is cut off", recreated, dir)})
	}
	actx, stopAim := context.WithCancel(ctx)
	var aiming sync.WaitGroup
	aiming.Add(1)
	go func() { defer aiming.Done(); rc.aim(actx, readers[0].s, cs[0].Log) }()
	defer aiming.Wait()
	defer stopAim()

	bound := (&Cache{}).bound(2*env.SessionTimeout + 5*time.Second)
	converge := func(ctx context.Context, round int64) bool {
		truth, err := readChildrenTruth(ctx, conns[0], dir)
		if err != nil {
			return false // ctx is done
		}
		var wg sync.WaitGroup
		for _, r := range readers {
			wg.Add(1)
			go func() { defer wg.Done(); r.converge(ctx, round, truth, bound, conns[0]) }()
		}
		wg.Wait()
		return true
	}
	round := int64(1)
	for ; ctx.Err() == nil; round++ {
		cw.run(ctx, 300*time.Millisecond, 10*time.Millisecond)
		if !converge(ctx, round) {
			break
		}
	}
	// The last round, on the final view: the writers stopped, every fault
	// healed (the runner heals before it ends the workload).
	stopAim()
	aiming.Wait()
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bound+env.SessionTimeout)
	defer cancel()
	converge(lctx, round)
	return nil
}

// recreator is the aimed writer of CacheRecreate: it owns the "r"
// children, each ephemeral of one of its two sessions.
type recreator struct {
	dir   string
	conns [2]*zk.Conn
	acl   []zk.ACL
	owner [recreated]int // which of conns owns each "r" child
	gen   int            // how many times they were created again
}

// setup creates the directory, the "s" children (persistent, through cw)
// and the "r" children (ephemeral, owned by the two sessions in turn).
func (rc *recreator) setup(cw *childWriter) error {
	ops := []any{&zk.CreateRequest{Path: rc.dir, Acl: rc.acl}}
	for i := range 4 {
		p := fmt.Sprintf("%s/s%d", rc.dir, i)
		ops = append(ops, &zk.CreateRequest{Path: p, Data: []byte("s"), Acl: rc.acl})
		cw.sets = append(cw.sets, p)
	}
	if _, err := rc.conns[0].Multi(ops...); err != nil {
		return fmt.Errorf("chaos: cache-recreate setup: %w", err)
	}
	for i := range recreated {
		rc.owner[i] = i % 2
		if _, err := rc.conns[i%2].Create(rc.path(i), rc.data(i), zk.FlagEphemeral, rc.acl); err != nil {
			return fmt.Errorf("chaos: cache-recreate setup: %w", err)
		}
	}
	return nil
}

func (rc *recreator) path(i int) string { return fmt.Sprintf("%s/r%d", rc.dir, i) }

// data is the data of "r" child i in its current generation: the same in
// every generation for the even ones (only the czxid and the owner tell
// the incarnations apart), new in each for the odd ones.
func (rc *recreator) data(i int) []byte {
	if i%2 == 0 {
		return []byte(fmt.Sprintf("r%d", i))
	}
	return []byte(fmt.Sprintf("r%d.g%d", i, rc.gen))
}

// aim waits for s (the target's session) to go from usable to cut off,
// and then deletes and creates again every "r" child; when s is still
// cut off afterwards it records the hit in log. Once per cut, until ctx
// ends.
func (rc *recreator) aim(ctx context.Context, s *recipes.Session, log *history.ClientLog) {
	cut := make(chan struct{}, 1)
	var (
		mu  sync.Mutex
		was = true // usable
	)
	_, _, stop := s.OnStateChange(func(c recipes.StateChange) {
		mu.Lock()
		defer mu.Unlock()
		now := usable(c.State)
		if was && !now && c.State != recipes.StateClosed {
			select {
			case cut <- struct{}{}:
			default:
			}
		}
		was = now
	})
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-cut:
		}
		if usable(s.State()) {
			continue // back already: the window is gone
		}
		n := rc.recreate()
		if st := s.State(); n > 0 && !usable(st) {
			log.Event(history.Event{Kind: history.KindAimHit, Key: rc.dir, Value: int64(n), Detail: fmt.Sprintf(
				"%d children deleted and created again at version 0 (another czxid and owner) while c1 was %s", n, st)})
		}
	}
}

// recreate deletes each "r" child and creates it again, owned by the
// other session, and returns how many it re-created.
func (rc *recreator) recreate() int {
	rc.gen++
	n := 0
	for i := range recreated {
		p := rc.path(i)
		if err := rc.conns[1].Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			continue
		}
		next := 1 - rc.owner[i]
		if _, err := rc.conns[next].Create(p, rc.data(i), zk.FlagEphemeral, rc.acl); err != nil {
			continue
		}
		rc.owner[i] = next
		n++
	}
	return n
}

// childWriter is the round writer of CacheRecreate: it sets the "s"
// children and creates and deletes "t" children (persistent), never
// touching the "r" children.
type childWriter struct {
	conn  *zk.Conn
	acl   []zk.ACL
	dir   string
	rng   *rand.Rand
	sets  []string
	temps []string
	next  int
}

// run writes for d, a write every pace, until ctx is done.
func (cw *childWriter) run(ctx context.Context, d, pace time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end) && ctx.Err() == nil; {
		cw.step()
		if !cluster.Sleep(ctx, pace) {
			return
		}
	}
}

// step makes one change: a set (50%), the create of a "t" child (25%) or
// the delete of one (25%).
func (cw *childWriter) step() {
	cw.next++
	data := []byte(fmt.Sprintf("v%d", cw.next))
	switch x := cw.rng.IntN(100); {
	case x < 50:
		_, _ = cw.conn.Set(cw.sets[cw.rng.IntN(len(cw.sets))], data, -1)
	case x < 75 || len(cw.temps) == 0:
		p := fmt.Sprintf("%s/t%d", cw.dir, cw.next)
		if _, err := cw.conn.Create(p, data, 0, cw.acl); err == nil {
			cw.temps = append(cw.temps, p)
		}
	default:
		i := cw.rng.IntN(len(cw.temps))
		if err := cw.conn.Delete(cw.temps[i], -1); err == nil || errors.Is(err, zk.ErrNoNode) {
			cw.temps = append(cw.temps[:i], cw.temps[i+1:]...)
		}
	}
}

// startChildrenReader starts a ChildrenCache of dir on s and records its
// events.
func startChildrenReader(ctx context.Context, c *cluster.Client, s *recipes.Session, dir string) (*treeReader, error) {
	cc, err := cache.NewChildrenCache(s, dir)
	if err != nil {
		return nil, err
	}
	truth := func(ctx context.Context, conn *zk.Conn) (map[string]truthNode, error) {
		return readChildrenTruth(ctx, conn, dir)
	}
	return recordReader(ctx, &treeReader{c: c, s: s, path: dir, nodes: cc.Current, truth: truth, stream: cc.Watch(context.WithoutCancel(ctx))}), nil
}

// readChildrenTruth syncs conn's server and reads the children of dir
// with their data and stat, retrying until it succeeds or ctx is done.
func readChildrenTruth(ctx context.Context, conn *zk.Conn, dir string) (map[string]truthNode, error) {
	for {
		truth, err := childrenOf(conn, dir)
		if err == nil {
			return truth, nil
		}
		if !cluster.Sleep(ctx, 50*time.Millisecond) {
			return nil, ctx.Err()
		}
	}
}

func childrenOf(conn *zk.Conn, dir string) (map[string]truthNode, error) {
	if _, err := conn.Sync(dir); err != nil {
		return nil, err
	}
	kids, _, err := conn.Children(dir)
	if err != nil {
		return nil, err
	}
	sort.Strings(kids)
	truth := make(map[string]truthNode, len(kids))
	for _, k := range kids {
		p := dir + "/" + k
		data, st, err := conn.Get(p)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			continue
		case err != nil:
			return nil, err
		}
		truth[p] = truthNode{czxid: st.Czxid, mzxid: st.Mzxid, data: data}
	}
	return truth, nil
}
