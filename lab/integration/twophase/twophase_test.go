package twophase_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/twophase"
)

// results collects every site's result for tx, plus the coordinator's
// (unless coord is 0).
func results(t *testing.T, tx string, coord twophase.Decision, sites ...*site) map[string]twophase.Decision {
	t.Helper()
	out := map[string]twophase.Decision{}
	if coord != 0 {
		out["coordinator"] = coord
	}
	for _, st := range sites {
		d, ok := st.result(tx)
		if !ok {
			t.Fatalf("site %s has no result for %s", st.name, tx)
		}
		out[st.name] = d
		if errs := st.errors(); len(errs) > 0 {
			t.Errorf("site %s: %v", st.name, errs)
		}
	}
	return out
}

func waitResult(t *testing.T, st *site, tx string, d time.Duration) {
	t.Helper()
	waitSite(t, st, d, "decision of "+tx, func() bool { _, ok := st.result(tx); return ok })
}

// TestAllCommit: every site votes commit; everyone ends with commit, and
// each site's liveness node is gone once it knows.
func TestAllCommit(t *testing.T) {
	e := ensemble(t)
	ctx := testCtx(t, time.Minute)
	root := testRoot(t)
	names := []string{"a", "b", "c"}
	var sites []*site
	for _, n := range names {
		sites = append(sites, startSite(t, connect(t, e.Addrs()), root, n, commitAll))
	}
	cs := connect(t, e.Addrs())
	c := newCoordinator(t, cs, root, twophase.WithVoteTimeout(time.Minute))
	tx, err := c.Begin(ctx, "t1", names, []byte("payload"))
	if err != nil {
		t.Fatal(err)
	}
	d := decideCommit(ctx, t, tx)
	for _, st := range sites {
		waitResult(t, st, "t1", 30*time.Second)
		if got := string(st.proposal("t1").Payload()); got != "payload" {
			t.Errorf("site %s: payload %q", st.name, got)
		}
		if got := st.proposal("t1").Sites(); fmt.Sprint(got) != fmt.Sprint(names) {
			t.Errorf("site %s: sites %v", st.name, got)
		}
	}
	checkInvariants(t, cs, root, "t1", names, twophase.Commit, results(t, "t1", d, sites...))
	for _, n := range names {
		waitFor(t, 10*time.Second, "liveness node of "+n+" deleted", func() bool {
			return !exists(t, cs, root+"/t1/"+n+"/alive")
		})
	}
	// Deciding again reads the same decision.
	if d2, err := tx.Decide(ctx); err != nil || d2 != twophase.Commit {
		t.Fatalf("second Decide: %v, %v", d2, err)
	}
}

// TestOneAbort: one abort vote aborts, long before the vote deadline.
func TestOneAbort(t *testing.T) {
	e := ensemble(t)
	ctx := testCtx(t, 30*time.Second)
	root := testRoot(t)
	names := []string{"a", "b", "c"}
	var sites []*site
	for _, n := range names {
		vote := commitAll
		if n == "b" {
			vote = func(*twophase.Proposal) twophase.Decision { return twophase.Abort }
		}
		sites = append(sites, startSite(t, connect(t, e.Addrs()), root, n, vote))
	}
	cs := connect(t, e.Addrs())
	c := newCoordinator(t, cs, root, twophase.WithVoteTimeout(time.Hour))
	tx, err := c.Begin(ctx, "t1", names, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := tx.Decide(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d != twophase.Abort {
		t.Fatalf("decision %v, want abort", d)
	}
	for _, st := range sites {
		waitResult(t, st, "t1", 20*time.Second)
	}
	checkInvariants(t, cs, root, "t1", names, twophase.Abort, results(t, "t1", d, sites...))
}

// TestParticipantDiesBeforeVoting: a site takes the proposal (its liveness
// node appears) and its session ends before it votes; the coordinator
// aborts at once, not at its deadline.
func TestParticipantDiesBeforeVoting(t *testing.T) {
	e := ensemble(t)
	ctx := testCtx(t, 30*time.Second)
	root := testRoot(t)
	names := []string{"a", "b", "c"}
	a := startSite(t, connect(t, e.Addrs()), root, "a", commitAll)
	b := startSite(t, connect(t, e.Addrs()), root, "b", commitAll)
	cSession := connect(t, e.Addrs())
	c := startSite(t, cSession, root, "c", func(*twophase.Proposal) twophase.Decision { return 0 })

	cs := connect(t, e.Addrs())
	coord := newCoordinator(t, cs, root, twophase.WithVoteTimeout(time.Hour))
	tx, err := coord.Begin(ctx, "t1", names, nil)
	if err != nil {
		t.Fatal(err)
	}
	decided := make(chan twophase.Decision, 1)
	go func() {
		d, err := tx.Decide(ctx)
		if err != nil {
			t.Errorf("decide: %v", err)
		}
		decided <- d
	}()
	waitSite(t, c, 10*time.Second, "proposal", func() bool { return c.proposal("t1") != nil })
	for _, st := range []*site{a, b} {
		waitSite(t, st, 10*time.Second, "vote", func() bool { _, ok := st.voted("t1"); return ok })
	}
	c.stop()
	closeSession(t, cSession) // site c dies
	var d twophase.Decision
	select {
	case d = <-decided:
	case <-ctx.Done():
		t.Fatal("no decision after site c died")
	}
	if d != twophase.Abort {
		t.Fatalf("decision %v, want abort", d)
	}
	for _, st := range []*site{a, b} {
		waitResult(t, st, "t1", 20*time.Second)
	}
	// c restarts and learns the decision too.
	c2 := newParticipant(t, connect(t, e.Addrs()), root, "c")
	p, err := c2.Lookup(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	cd, err := p.Await(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res := results(t, "t1", d, a, b)
	res["c (restarted)"] = cd
	checkInvariants(t, cs, root, "t1", names, twophase.Abort, res)

	// A site that dies before the coordinator even looks: the site node's
	// child version still shows a liveness node came and went.
	tx2, err := coord.Begin(ctx, "t2", names, nil)
	if err != nil {
		t.Fatal(err)
	}
	dying := connect(t, e.Addrs())
	if _, err := newParticipant(t, dying, root, "c").Lookup(ctx, "t2"); err != nil {
		t.Fatal(err)
	}
	closeSession(t, dying)
	if d, err := tx2.Decide(ctx); err != nil || d != twophase.Abort {
		t.Fatalf("t2: %v, %v", d, err)
	}
	data, _, err := cs.Conn().Get(root + "/t2/decision")
	if err != nil || !strings.Contains(string(data), "site c lost its liveness node") {
		t.Fatalf("t2 decision %q, %v", data, err)
	}
}

// TestCoordinatorDiesAfterVotes: every site voted commit and the
// coordinator is gone. Either a participant's deadline aborts safely, or a
// restarted coordinator finishes the transaction (commit).
func TestCoordinatorDiesAfterVotes(t *testing.T) {
	e := ensemble(t)
	names := []string{"a", "b", "c"}

	begin := func(t *testing.T, root string) {
		ctx := testCtx(t, 30*time.Second)
		cs := connect(t, e.Addrs())
		if _, err := newCoordinator(t, cs, root).Begin(ctx, "t1", names, []byte("x")); err != nil {
			t.Fatal(err)
		}
		closeSession(t, cs) // the coordinator dies before deciding
	}
	votes := func(t *testing.T, sites []*site) {
		for _, st := range sites {
			waitSite(t, st, 10*time.Second, "vote", func() bool { _, ok := st.voted("t1"); return ok })
		}
	}

	t.Run("participant deadline aborts", func(t *testing.T) {
		checkGoroutines(t)
		root := testRoot(t)
		begin(t, root)
		var sites []*site
		for i, n := range names {
			// Different deadlines: the first to expire decides, the others
			// read its decision.
			dl := twophase.WithDeadline(time.Duration(2+i) * time.Second)
			sites = append(sites, startSite(t, connect(t, e.Addrs()), root, n, commitAll, dl))
		}
		votes(t, sites)
		for _, st := range sites {
			waitResult(t, st, "t1", 20*time.Second)
		}
		admin := connect(t, e.Addrs())
		checkInvariants(t, admin, root, "t1", names, twophase.Abort, results(t, "t1", 0, sites...))
	})

	t.Run("restarted coordinator commits", func(t *testing.T) {
		checkGoroutines(t)
		root := testRoot(t)
		begin(t, root)
		var sites []*site
		for _, n := range names {
			sites = append(sites, startSite(t, connect(t, e.Addrs()), root, n, commitAll, twophase.WithDeadline(0)))
		}
		votes(t, sites)
		ctx := testCtx(t, 30*time.Second)
		cs := connect(t, e.Addrs())
		coord := newCoordinator(t, cs, root)
		pending, err := coord.Pending(ctx)
		if err != nil || fmt.Sprint(pending) != "[t1]" {
			t.Fatalf("pending: %v, %v", pending, err)
		}
		tx, err := coord.Resume(ctx, "t1")
		if err != nil {
			t.Fatal(err)
		}
		if string(tx.Payload()) != "x" || fmt.Sprint(tx.Sites()) != fmt.Sprint(names) {
			t.Fatalf("resumed %q %v", tx.Payload(), tx.Sites())
		}
		d, err := tx.Decide(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range sites {
			waitResult(t, st, "t1", 20*time.Second)
		}
		checkInvariants(t, cs, root, "t1", names, twophase.Commit, results(t, "t1", d, sites...))
		if pending, err := coord.Pending(ctx); err != nil || len(pending) != 0 {
			t.Fatalf("pending after decision: %v, %v", pending, err)
		}
	})
}

// TestDeadlines: a missing vote aborts at the coordinator's vote deadline;
// with the coordinator waiting longer, a participant's own deadline aborts
// first and the coordinator reads that decision (its watch on the decision
// node wakes it).
func TestDeadlines(t *testing.T) {
	e := ensemble(t)
	names := []string{"a", "b"} // b never shows up
	cases := []struct {
		name        string
		voteTimeout time.Duration
		deadline    time.Duration
		reason      string
	}{
		{"coordinator", time.Second, 0, "vote deadline passed without votes from b"},
		{"participant", time.Hour, time.Second, "site a saw no decision before its deadline"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkGoroutines(t)
			ctx := testCtx(t, 30*time.Second)
			root := testRoot(t)
			a := startSite(t, connect(t, e.Addrs()), root, "a", commitAll, twophase.WithDeadline(tc.deadline))
			cs := connect(t, e.Addrs())
			tx, err := newCoordinator(t, cs, root, twophase.WithVoteTimeout(tc.voteTimeout)).Begin(ctx, "t1", names, nil)
			if err != nil {
				t.Fatal(err)
			}
			d, err := tx.Decide(ctx)
			if err != nil {
				t.Fatal(err)
			}
			waitResult(t, a, "t1", 10*time.Second)
			checkInvariants(t, cs, root, "t1", names, twophase.Abort, results(t, "t1", d, a))
			data, _, err := cs.Conn().Get(root + "/t1/decision")
			if err != nil || !strings.Contains(string(data), tc.reason) {
				t.Fatalf("decision %q (%v), want reason %q", data, err, tc.reason)
			}
		})
	}
}

// TestParticipantRestartsBeforeVoting: a site's new process takes over its
// liveness node before the old session ends, so the coordinator never sees
// the site without one, and the transaction can still commit.
func TestParticipantRestartsBeforeVoting(t *testing.T) {
	e := ensemble(t)
	ctx := testCtx(t, 30*time.Second)
	root := testRoot(t)
	names := []string{"a", "b"}
	cs := connect(t, e.Addrs())
	tx, err := newCoordinator(t, cs, root, twophase.WithVoteTimeout(time.Hour)).Begin(ctx, "t1", names, nil)
	if err != nil {
		t.Fatal(err)
	}
	decided := make(chan twophase.Decision, 1)
	go func() {
		d, err := tx.Decide(ctx)
		if err != nil {
			t.Errorf("decide: %v", err)
		}
		decided <- d
	}()
	old := connect(t, e.Addrs())
	if _, err := newParticipant(t, old, root, "a").Lookup(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	alive := root + "/t1/a/alive"
	_, st, err := cs.Conn().Exists(alive)
	if err != nil || st.EphemeralOwner != old.ID() {
		t.Fatalf("liveness node: %+v, %v", st, err)
	}
	ns := connect(t, e.Addrs())
	pa, err := newParticipant(t, ns, root, "a").Lookup(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if _, st, err = cs.Conn().Exists(alive); err != nil || st.EphemeralOwner != ns.ID() {
		t.Fatalf("liveness node not taken over: %+v, %v", st, err)
	}
	closeSession(t, old)
	if !exists(t, cs, alive) {
		t.Fatal("the old session's end deleted the new liveness node")
	}
	pb, err := newParticipant(t, connect(t, e.Addrs()), root, "b").Lookup(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*twophase.Proposal{pa, pb} {
		if err := p.Vote(ctx, twophase.Commit); err != nil {
			t.Fatal(err)
		}
	}
	d := <-decided
	res := map[string]twophase.Decision{"coordinator": d}
	for _, p := range []*twophase.Proposal{pa, pb} {
		if res[p.Site()], err = p.Await(ctx); err != nil {
			t.Fatal(err)
		}
	}
	checkInvariants(t, cs, root, "t1", names, twophase.Commit, res)
}

// TestFinishLeavesNewLiveness: a site's new process takes over its
// liveness node (as in TestParticipantRestartsBeforeVoting) while the old
// process is still running, and the old one finishes the transaction
// after that. The old Finish deletes only a liveness node of its own
// session: the new process's node stays until the new process finishes.
// Before, Finish deleted the node by path, whoever owned it.
func TestFinishLeavesNewLiveness(t *testing.T) {
	e := ensemble(t)
	ctx := testCtx(t, 30*time.Second)
	root := testRoot(t)
	cs := connect(t, e.Addrs())
	tx, err := newCoordinator(t, cs, root).Begin(ctx, "t1", []string{"a"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	old, ns := connect(t, e.Addrs()), connect(t, e.Addrs())
	pOld, err := newParticipant(t, old, root, "a").Lookup(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	pNew, err := newParticipant(t, ns, root, "a").Lookup(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	alive := root + "/t1/a/alive"
	owner := func() int64 { // 0: no liveness node
		ok, st, err := cs.Conn().Exists(alive)
		if err != nil {
			t.Fatalf("exists %s: %v", alive, err)
		}
		if !ok {
			return 0
		}
		return st.EphemeralOwner
	}
	if got := owner(); got != ns.ID() {
		t.Fatalf("liveness node owned by 0x%x, want the new session 0x%x", got, ns.ID())
	}
	if err := pOld.Vote(ctx, twophase.Commit); err != nil {
		t.Fatal(err)
	}
	if d, err := tx.Decide(ctx); err != nil || d != twophase.Commit {
		t.Fatalf("Decide = %v, %v", d, err)
	}
	for _, p := range []*twophase.Proposal{pOld, pNew} {
		if d, err := p.Await(ctx); err != nil || d != twophase.Commit {
			t.Fatalf("Await = %v, %v", d, err)
		}
	}
	if err := pOld.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	if got := owner(); got != ns.ID() {
		t.Fatalf("after the old process's Finish the liveness node is owned by 0x%x, want the new session 0x%x", got, ns.ID())
	}
	if err := pNew.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	if got := owner(); got != 0 {
		t.Fatalf("after the new process's Finish a liveness node of 0x%x is left", got)
	}
}
