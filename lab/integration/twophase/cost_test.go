package twophase_test

import (
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/twophase"
)

func countedSession(t *testing.T, addrs []string) (*recipes.Session, *zkcount.Counter) {
	t.Helper()
	return testutil.CountedSession(t, addrs, recipes.WithSessionTimeout(sessionTimeout))
}

// wantOps checks the requests and notifications counted since before. The
// counter records a request after its write returns, possibly after the
// answer was read, so the last request of a call may be counted a moment
// after the call returned: wait (briefly) for the counts to match.
func wantOps(t *testing.T, what string, c *zkcount.Counter, before zkcount.Counts, want map[zkcount.Op]int64, notifications int64) {
	t.Helper()
	match := func(d zkcount.Counts) bool {
		ok := len(d.Requests) == len(want) && d.Notifications == notifications
		for op, n := range want {
			ok = ok && d.Req(op) == n
		}
		return ok
	}
	deadline := time.Now().Add(2 * time.Second)
	d := c.Snapshot().Sub(before)
	for !match(d) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
		d = c.Snapshot().Sub(before)
	}
	if !match(d) {
		t.Errorf("%s: requests %v, %d notifications; want %v, %d", what, d.Requests, d.Notifications, want, notifications)
		return
	}
	t.Logf("%s: %v, %d notifications", what, d.Requests, d.Notifications)
}

// TestCost counts requests and notifications on the wire for one
// transaction of two sites, matching the costs in the doc comments: the
// coordinator is woken once per vote, each waiting site once by the
// decision.
func TestCost(t *testing.T) {
	e := ensemble(t)
	ctx := testCtx(t, 30*time.Second)
	root := testRoot(t)
	cs, cc := countedSession(t, e.Addrs())
	as, ac := countedSession(t, e.Addrs())
	bs, bc := countedSession(t, e.Addrs())
	coord := newCoordinator(t, cs, root, twophase.WithVoteTimeout(time.Minute))
	if _, err := coord.Begin(ctx, "warm-up", []string{"a"}, nil); err != nil { // creates the root
		t.Fatal(err)
	}
	names := []string{"a", "b"}

	before := cc.Snapshot()
	tx, err := coord.Begin(ctx, "t1", names, []byte("p"))
	if err != nil {
		t.Fatal(err)
	}
	wantOps(t, "Begin", cc, before, map[zkcount.Op]int64{zkcount.OpMulti: 1}, 0)

	before = ac.Snapshot()
	pa, err := newParticipant(t, as, root, "a").Lookup(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	wantOps(t, "Lookup", ac, before, map[zkcount.Op]int64{
		zkcount.OpGetChildren2: 2, zkcount.OpCreate: 1, zkcount.OpGetData: 1}, 0)
	pb, err := newParticipant(t, bs, root, "b").Lookup(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}

	// The coordinator waits for both votes; b waits for the decision.
	beforeC, beforeB := cc.Snapshot(), bc.Snapshot()
	decided := make(chan twophase.Decision, 1)
	go func() {
		d, err := tx.Decide(ctx)
		if err != nil {
			t.Errorf("decide: %v", err)
		}
		decided <- d
	}()
	awaited := make(chan twophase.Decision, 1)
	go func() {
		d, err := pb.Await(ctx)
		if err != nil {
			t.Errorf("await: %v", err)
		}
		awaited <- d
	}()
	// Both are waiting once each has armed its watches (coordinator: 1
	// exists + 2 getChildren; b: 2 exists).
	waitFor(t, 10*time.Second, "watches armed", func() bool {
		return cc.Snapshot().Sub(beforeC).Req(zkcount.OpGetChildren2) == 2 && bc.Snapshot().Sub(beforeB).Req(zkcount.OpExists) == 2
	})
	before = ac.Snapshot()
	for _, p := range []*twophase.Proposal{pa, pb} {
		if err := p.Vote(ctx, twophase.Commit); err != nil {
			t.Fatal(err)
		}
	}
	wantOps(t, "Vote", ac, before, map[zkcount.Op]int64{zkcount.OpCreate: 1}, 0)
	d := <-decided
	if d != twophase.Commit {
		t.Fatalf("decision %v", d)
	}
	// 1 exists (decision watch) + per site: 1 getChildren, then on its vote
	// 1 getData; then 1 create. One notification per vote, and one from the
	// watch on the decision node, fired by our own create.
	wantOps(t, "Decide", cc, beforeC, map[zkcount.Op]int64{
		zkcount.OpExists: 1, zkcount.OpGetChildren2: 2, zkcount.OpGetData: 2, zkcount.OpCreate: 1}, 3)
	if <-awaited != twophase.Commit {
		t.Fatal("b did not learn commit")
	}
	// b: its vote (1 create); Await: 1 exists (watch) + 1 exists (tx),
	// woken once, 1 exists (watch) + 1 getData.
	wantOps(t, "Await (waiting)", bc, beforeB, map[zkcount.Op]int64{
		zkcount.OpExists: 3, zkcount.OpGetData: 1, zkcount.OpCreate: 1}, 1)

	before = ac.Snapshot()
	if d, err := pa.Await(ctx); err != nil || d != twophase.Commit {
		t.Fatalf("a: %v, %v", d, err)
	}
	wantOps(t, "Await (decided)", ac, before, map[zkcount.Op]int64{
		zkcount.OpExists: 1, zkcount.OpGetData: 1}, 0)
	before = ac.Snapshot()
	if err := pa.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	wantOps(t, "Finish", ac, before, map[zkcount.Op]int64{
		zkcount.OpMulti: 1, zkcount.OpExists: 1, zkcount.OpDelete: 1}, 0)
	if err := pb.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	// The liveness nodes' deletion woke nobody: the coordinator no longer
	// watches sites that voted.
	if n := cc.Snapshot().Sub(beforeC).Notifications; n != 3 {
		t.Errorf("coordinator got %d notifications in all, want 3", n)
	}
}
