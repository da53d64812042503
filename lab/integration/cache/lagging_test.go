package cache_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/cache"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// laggingTick is the tick of TestLossOnLaggingServerNeverBack's ensemble:
// a follower cut off from its leader serves SyncLimit ticks more (5 s), the
// window the test's steps must fit in (they take about 100 ms on an idle
// machine). laggingTimeout is its sessions' timeout: the lease must allow
// for those SyncLimit ticks (recipes.WithEnsembleTiming).
const (
	laggingTick    = time.Second
	laggingTimeout = 12 * time.Second
)

// TestLossOnLaggingServerNeverBack: the cache's session is lost and its
// new one is granted by a server that is behind what the old one read; the
// cache must not report the older data it could read there ("Never back",
// through a session loss: the cache syncs before reading again).
//
// The set-up makes that server: an ensemble with local sessions (a server
// grants one by itself, with no transaction through the leader), a
// follower F cut off from the others (it goes on serving for SyncLimit
// ticks, with what it had), x changed and y created after the cut, the
// cache on the leader seeing both, then its session given up as a new handle
// would (testenv.SessionDropper: session 0, last zxid 0) with only F
// reachable. On F the cache's sync waits for the leader, which F cannot
// reach: the cache reads nothing there, and reads again once the ensemble
// is whole. A cache that reads without the sync finds y missing there and
// reports it removed, then added again, unchanged, once it reads a server
// that has it: y's events go back. (An older x it would drop: the cache
// keeps the larger Mzxid of a node it holds.)
func TestLossOnLaggingServerNeverBack(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real ZooKeeper ensemble of its own")
	}
	e := testutil.NewEnsemble(t, testenv.Config{Servers: 3, TickTime: laggingTick, LocalSessions: true})
	testutil.NoLeakedGoroutines(t, testutil.Running("recipes", "cache"))
	ctx := ctxT(t, 2*time.Minute)
	timing := []recipes.Option{recipes.WithEnsembleTiming(e.Timing()), recipes.WithSessionTimeout(laggingTimeout)}
	ldr, err := e.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, other := (ldr+1)%3, (ldr+2)%3
	w := connect(t, []string{e.Addrs()[ldr]}, timing...)
	// probe is a session on F, to show that F is behind when the cache's
	// new session reads there (the test's own check that it exercised
	// what it is about).
	probe := connect(t, []string{e.Addrs()[f]}, timing...)
	root := "/zkrecipes-test/cache/lagging" // the ensemble is the test's own
	mkdirs(t, w, root)
	x, y := root+"/x", root+"/y"
	create(t, w, x, "before the cut")

	link, err := e.NewLink("cache")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	if err := link.Cut(f, other); err != nil { // the cache's session on the leader
		t.Fatal(err)
	}
	d := &testenv.SessionDropper{}
	s := testutil.ConnectWrapped(t, link.Addrs(), d.Wrap, timing...)
	c := newTree(t, s, root)
	r := record(t, c.Watch(ctxT(t, 2*time.Minute)))
	r.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
	if _, _, err := probe.Conn().Get(x); err != nil { // F has x as created
		t.Fatal(err)
	}

	cut := time.Now()
	if err := e.Isolate(ctx, f); err != nil {
		t.Fatal(err)
	}
	rejoined := false
	defer func() {
		if !rejoined {
			if err := e.Rejoin(ctxT(t, time.Minute), f); err != nil {
				t.Error(err)
			}
		}
	}()
	// Committed by the leader and the other follower: x changed, y new.
	set(t, w, x, "after the cut")
	create(t, w, y, "after the cut")
	xz, yz := mzxid(t, w, x), mzxid(t, w, y)
	waitFor(t, 2*time.Second, "the cache to see x changed and y", func() bool {
		xn, xok := c.Get(x)
		yn, yok := c.Get(y)
		return xok && xn.Stat.Mzxid == xz && yok && yn.Stat.Mzxid == yz
	})
	old := s.ID()
	d.Drop(old)
	if err := link.Restore(f); err != nil {
		t.Fatal(err)
	}
	if err := link.Cut(ldr); err != nil { // closes the session's connection
		t.Fatal(err)
	}
	waitFor(t, 2*time.Second, "the cache's new session", func() bool { return s.ID() != 0 && s.ID() != old })
	if got, want := s.Conn().Server(), link.Addrs()[f]; got != want {
		t.Fatalf("not exercised: the new session is on %s, want the cut-off follower's %s", got, want)
	}
	if _, pst, err := probe.Conn().Get(x); err != nil {
		t.Fatalf("not exercised: %v after the cut, the cut-off follower no longer serves: %v", time.Since(cut).Round(time.Millisecond), err)
	} else if pst.Mzxid >= xz {
		t.Fatalf("not exercised: the cut-off follower serves x at mzxid %d, want older than %d", pst.Mzxid, xz)
	}
	// F serves until it leaves the quorum: give a cache that reads at
	// once all that time, then let F back.
	waitFor(t, 30*time.Second, "the cut-off follower to stop serving", func() bool {
		_, err := e.Mode(ctxT(t, time.Second), f)
		return err != nil
	})
	t.Logf("the cut-off follower served %v after the cut", time.Since(cut).Round(time.Millisecond))
	if n, ok := c.Get(x); !ok || n.Stat.Mzxid != xz {
		t.Errorf("while only the cut-off follower was reachable, the cache came to hold x as %s", nodeString(n, ok))
	}
	if n, ok := c.Get(y); !ok || n.Stat.Mzxid != yz {
		t.Errorf("while only the cut-off follower was reachable, the cache came to hold y as %s", nodeString(n, ok))
	}
	rejoined = true
	if err := e.Rejoin(ctx, f); err != nil {
		t.Fatal(err)
	}
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	r.waitCount(t, 30*time.Second, cache.EventInitialized, 2)
	converge(t, 30*time.Second, w, root, treeShape, c.Nodes)
}

// nodeString describes a node the view may not have.
func nodeString(n cache.Node, ok bool) string {
	if !ok {
		return "missing"
	}
	return fmt.Sprintf("%q (mzxid %d)", n.Data, n.Stat.Mzxid)
}

// mzxid returns p's Stat.Mzxid as s reads it.
func mzxid(tb testing.TB, s *recipes.Session, p string) int64 {
	tb.Helper()
	_, st, err := s.Conn().Get(p)
	if err != nil {
		tb.Fatalf("get %s: %v", p, err)
	}
	return st.Mzxid
}
