package cache_test

import (
	"math/rand"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/cache"
	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// waitState waits until s is in state want.
func waitState(tb testing.TB, d time.Duration, s *recipes.Session, want recipes.State) {
	tb.Helper()
	waitFor(tb, d, "session "+want.String(), func() bool { return s.State() == want })
}

// Tests that reconnect a session log nothing unless they fail, and
// reconnect no more than they need: go-zookeeper v1.0.4 races on its own
// lastZxid when a session reconnects with watches set (and a cache reads
// at once after a reconnection), and these tests run under -race, where
// scripts/test.sh reruns nothing.

// TestCutConverges: the connection of a tree cache's session is cut while
// a writer changes the tree; once it is back (same session), the cache
// equals ZooKeeper's state, and what it read to get there is one read per
// cached node and listing, not more (the re-read after reconnection).
func TestCutConverges(t *testing.T) {
	e := ensemble(t)
	w := connect(t, e.Addrs())
	link, err := e.NewLink("cut")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s, counter := testutil.CountedSession(t, link.Addrs())
	root := testPath(t)
	mkdirs(t, w, root)
	rng := rand.New(rand.NewSource(2))
	paths := []string{root}
	for range 40 {
		randomOp(t, w, rng, &paths)
	}
	c := newTree(t, s, root)
	r := record(t, c.Watch(ctxT(t, 2*time.Minute)))
	r.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
	converge(t, 10*time.Second, w, root, treeShape, c.Nodes)

	for round := range 2 {
		sid := s.ID()
		if err := link.Cut(); err != nil {
			t.Fatal(err)
		}
		waitState(t, 10*time.Second, s, recipes.StateSuspended)
		for range 30 {
			randomOp(t, w, rng, &paths)
		}
		before, cached := counter.Snapshot(), len(c.Nodes())
		if err := link.Restore(); err != nil {
			t.Fatal(err)
		}
		converge(t, 20*time.Second, w, root, treeShape, c.Nodes)
		if s.ID() != sid {
			t.Fatalf("round %d: the session changed: the cut was too long for this test", round)
		}
		d := counter.Snapshot().Sub(before)
		n := len(c.Nodes())
		reads := d.Req(zkcount.OpGetData) + d.Req(zkcount.OpGetChildren2) + d.Req(zkcount.OpExists)
		// At most one getData and one getChildren per node cached before
		// (the re-read) and per node cached now (the new ones).
		if max := int64(2*(cached+n) + 2); reads > max {
			t.Errorf("round %d: %d reads after the reconnection for %d+%d nodes, want at most %d", round, reads, cached, n, max)
		}
		if r.count(cache.EventReset) != 0 {
			t.Fatalf("round %d: a reset without a session loss", round)
		}
	}
}

// TestExpiryConverges: the tree cache's session expires while a writer
// changes the tree; the cache says so (EventReset), reads everything again
// under the new session (EventInitialized), and equals ZooKeeper's state.
// The ephemeral nodes of the lost session leave the cache.
func TestExpiryConverges(t *testing.T) {
	e := ensemble(t)
	w := connect(t, e.Addrs())
	link, err := e.NewLink("expire")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s, counter := testutil.CountedSession(t, link.Addrs())
	root := testPath(t)
	mkdirs(t, w, root)
	rng := rand.New(rand.NewSource(3))
	paths := []string{root}
	for range 40 {
		randomOp(t, w, rng, &paths)
	}
	eph := root + "/ephemeral"
	if _, err := s.Conn().Create(eph, []byte("mine"), zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	c := newTree(t, s, root)
	r := record(t, c.Watch(ctxT(t, 2*time.Minute)))
	r.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
	converge(t, 10*time.Second, w, root, treeShape, c.Nodes)

	for round := range 2 {
		sid := s.ID()
		done := make(chan error, 1)
		go func() { done <- link.ExpireSession(ctxT(t, time.Minute), sid) }()
		for range 30 {
			randomOp(t, w, rng, &paths)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		r.waitCount(t, 20*time.Second, cache.EventReset, round+1)
		r.waitCount(t, 20*time.Second, cache.EventInitialized, round+2)
		converge(t, 20*time.Second, w, root, treeShape, c.Nodes)
		if _, ok := c.Get(eph); ok {
			t.Fatalf("round %d: the lost session's ephemeral node is still cached", round)
		}
		if s.ID() == sid {
			t.Fatalf("round %d: same session after the expiry", round)
		}
		// A new session may reach a server behind the old one (a
		// local session): the cache syncs it before reading again.
		if got := counter.Snapshot().Req(zkcount.OpSync); got != int64(round+1) {
			t.Fatalf("round %d: %d syncs, want %d", round, got, round+1)
		}
	}
}

// TestLostReadIsReadAgain: a watch event arrives, and the connection dies
// with the read it caused (the link delivers the event and then nothing
// more, in either direction): that read set no watch, and go-zookeeper has
// none left to restore for the node. The cache reads it again once the
// session is back, and converges. The mutant that skips the re-read after
// a reconnection keeps the old value, and no longer watches the node.
func TestLostReadIsReadAgain(t *testing.T) {
	testutil.RequireHooks(t)
	for _, mutant := range []bool{false, true} {
		t.Run(map[bool]string{false: "cache", true: "mutant"}[mutant], func(t *testing.T) {
			e := ensemble(t)
			w := connect(t, e.Addrs())
			link, err := e.NewLink("lost-read")
			if err != nil {
				t.Fatal(err)
			}
			defer link.Close()
			// Long enough for the lease to outlast the silent link
			// (go-zookeeper gives up at 2/3 of it) and the reconnection;
			// the ensemble's own timing (a single server: no lag).
			s := connect(t, link.Addrs(), recipes.WithSessionTimeout(10*time.Second), recipes.WithEnsembleTiming(e.Timing()))
			root := testPath(t)
			mkdirs(t, w, root)
			x, y := root+"/x", root+"/y"
			create(t, w, x, "v1")
			create(t, w, y, "y1")
			defer hooks.SetCacheSkipReread(mutant)()
			c := newTree(t, s, root)
			r := record(t, c.Watch(ctxT(t, time.Minute)))
			r.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
			waitFor(t, 10*time.Second, "the watches", func() bool { return zkWatchers(t, s.Conn()) == 6 })

			if err := link.CutAfterNextFrame(); err != nil {
				t.Fatal(err)
			}
			set(t, w, x, "v2") // its event is the last frame through
			waitState(t, 20*time.Second, s, recipes.StateSuspended)
			if err := link.Heal(); err != nil {
				t.Fatal(err)
			}
			waitState(t, 20*time.Second, s, recipes.StateReconnected)
			if r.count(cache.EventReset) != 0 {
				t.Fatal("the session was lost: the test needs a longer session timeout")
			}
			set(t, w, y, "y2") // a change the cache still watches
			if !mutant {
				converge(t, 10*time.Second, w, root, treeShape, c.Nodes)
				return
			}
			r.history(t, y, 2)
			if got, _ := c.Get(x); string(got.Data) != "v1" {
				t.Fatalf("the mutant has x = %q, want the stale v1", got.Data)
			}
			set(t, w, x, "v3")
			set(t, w, y, "y3")
			r.history(t, y, 3)
			if got, _ := c.Get(x); string(got.Data) != "v1" {
				t.Fatalf("the mutant has x = %q, want the stale v1 (it no longer watches x)", got.Data)
			}
		})
	}
}
