package twophase_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/twophase"
)

// TestPartitionedParticipant: site c votes commit, then its link fails
// while the coordinator decides. c learns the decision once the link heals:
// on the same session after a cut, and on a new session after its session
// expired during the partition.
func TestPartitionedParticipant(t *testing.T) {
	e := ensemble(t)
	names := []string{"a", "b", "c"}
	for _, expire := range []bool{false, true} {
		t.Run(fmt.Sprintf("expire=%v", expire), func(t *testing.T) {
			checkGoroutines(t)
			ctx := testCtx(t, time.Minute)
			root := testRoot(t)
			link, err := e.NewLink("twophase-c")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = link.Close() })
			a := startSite(t, connect(t, e.Addrs()), root, "a", commitAll)
			b := startSite(t, connect(t, e.Addrs()), root, "b", commitAll)
			cSession := connect(t, link.Addrs())
			c := startSite(t, cSession, root, "c", commitAll, twophase.WithDeadline(0))
			cs := connect(t, e.Addrs())
			tx, err := newCoordinator(t, cs, root).Begin(ctx, "t1", names, nil)
			if err != nil {
				t.Fatal(err)
			}
			waitSite(t, c, 10*time.Second, "vote", func() bool { _, ok := c.voted("t1"); return ok })

			expired := make(chan error, 1)
			sid := cSession.ID()
			if expire {
				go func() { expired <- link.ExpireSession(ctx, sid) }()
				waitFor(t, 10*time.Second, "c suspended (or already lost)", func() bool {
					st := cSession.State()
					return st == recipes.StateSuspended || st == recipes.StateLost
				})
			} else {
				if err := link.Cut(); err != nil {
					t.Fatal(err)
				}
				waitFor(t, 10*time.Second, "c suspended", func() bool { return cSession.State() != recipes.StateConnected })
			}
			d := decideCommit(ctx, t, tx)
			waitResult(t, a, "t1", 10*time.Second)
			waitResult(t, b, "t1", 10*time.Second)
			if _, ok := c.result("t1"); ok {
				t.Fatal("c learned the decision through a failed link")
			}
			if expire {
				if err := <-expired; err != nil {
					t.Fatal(err)
				}
			} else if err := link.Restore(); err != nil {
				t.Fatal(err)
			}
			waitResult(t, c, "t1", 30*time.Second)
			if expire && cSession.ID() == sid {
				t.Errorf("c kept session 0x%x through the expiry", sid)
			}
			checkInvariants(t, cs, root, "t1", names, twophase.Commit, results(t, "t1", d, a, b, c))
		})
	}
}

// TestAwaitWatchesAgainAfterSessionLoss: "after a session loss it watches
// again under the new session" (Proposal.Await). Site c votes commit and
// awaits; its session expires while the transaction is undecided, and c
// goes on under a new session; only then does the coordinator decide. The
// old session's watch ends at the expiry (go-zookeeper's EventNotWatching):
// an Await that took that for the decision's creation would read "no
// decision" and end the transaction with it. c must wait on and end with
// the decision the coordinator made.
func TestAwaitWatchesAgainAfterSessionLoss(t *testing.T) {
	e := ensemble(t)
	ctx := testCtx(t, time.Minute)
	root := testRoot(t)
	link, err := e.NewLink("twophase-await")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = link.Close() })
	names := []string{"a", "c"}
	a := startSite(t, connect(t, e.Addrs()), root, "a", commitAll, twophase.WithDeadline(0))
	cSession := connect(t, link.Addrs())
	c := startSite(t, cSession, root, "c", commitAll, twophase.WithDeadline(0))
	cs := connect(t, e.Addrs())
	tx, err := newCoordinator(t, cs, root).Begin(ctx, "t1", names, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitSite(t, c, 10*time.Second, "vote", func() bool { _, ok := c.voted("t1"); return ok })
	sid := cSession.ID()
	// The server's own list of watches (wchc) says when c's Await waits on
	// the decision under the session about to expire.
	decision := root + "/t1/decision"
	waitFor(t, 10*time.Second, "c watching "+decision, func() bool {
		return testutil.SessionWatches(t, e, sid)[decision]
	})
	// The server has registered the watch; two reads on c's connection,
	// answered in order after Await's, make sure go-zookeeper has handed
	// Await its exists replies too, so that it waits on this session's
	// watch (and not on one set again under the next session).
	for range 2 {
		if _, _, err := cSession.Conn().Exists(root); err != nil {
			t.Fatal(err)
		}
	}
	if err := link.ExpireSession(ctx, sid); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "c on a new session", func() bool {
		return cSession.State() == recipes.StateConnected && cSession.ID() != sid
	})
	if d, ok := c.result("t1"); ok {
		t.Fatalf("c ended t1 with %v before any decision was made", d)
	}
	d := decideCommit(ctx, t, tx)
	waitResult(t, a, "t1", 10*time.Second)
	waitResult(t, c, "t1", 30*time.Second)
	if errs := c.errors(); len(errs) > 0 {
		t.Errorf("c's errors: %v", errs)
	}
	checkInvariants(t, cs, root, "t1", names, twophase.Commit, results(t, "t1", d, a, c))
}

// TestConcurrentTransactions: 10 transactions among 4 sites at once; in
// every third one, one site votes abort.
func TestConcurrentTransactions(t *testing.T) {
	e := ensemble(t)
	ctx := testCtx(t, time.Minute)
	root := testRoot(t)
	names := []string{"s0", "s1", "s2", "s3"}
	const n = 10
	txName := func(i int) string { return fmt.Sprintf("tx%02d", i) }
	aborter := func(i int) string {
		if i%3 == 0 {
			return names[i%4]
		}
		return ""
	}
	var sites []*site
	for _, name := range names {
		vote := func(p *twophase.Proposal) twophase.Decision {
			var i int
			fmt.Sscanf(p.TxID(), "tx%d", &i)
			if aborter(i) == name {
				return twophase.Abort
			}
			return twophase.Commit
		}
		sites = append(sites, startSite(t, connect(t, e.Addrs()), root, name, vote))
	}
	cs := connect(t, e.Addrs())
	coord := newCoordinator(t, cs, root, twophase.WithVoteTimeout(time.Minute))
	decisions := make([]twophase.Decision, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			tx, err := coord.Begin(ctx, txName(i), names, fmt.Appendf(nil, "payload %d", i))
			if err != nil {
				t.Errorf("begin %d: %v", i, err)
				return
			}
			if decisions[i], err = tx.Decide(ctx); err != nil {
				t.Errorf("decide %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for i := range n {
		for _, st := range sites {
			waitResult(t, st, txName(i), 20*time.Second)
		}
		want := twophase.Commit
		if aborter(i) != "" {
			want = twophase.Abort
		}
		checkInvariants(t, cs, root, txName(i), names, want, results(t, txName(i), decisions[i], sites...))
	}
}

// TestVotesAndLookup: votes are written once, restarted participants find
// their transactions (begun while away, or voted before), Begin is
// idempotent, unknown transactions and foreign sites are refused.
func TestVotesAndLookup(t *testing.T) {
	e := ensemble(t)
	ctx := testCtx(t, time.Minute)
	root := testRoot(t)
	cs := connect(t, e.Addrs())
	coord := newCoordinator(t, cs, root, twophase.WithVoteTimeout(time.Minute))
	// Begun while no participant runs.
	tx, err := coord.Begin(ctx, "t1", []string{"b", "a"}, []byte("p"))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(tx.Sites()) != "[a b]" {
		t.Fatalf("sites %v", tx.Sites())
	}
	if _, err := coord.Begin(ctx, "t2", []string{"b"}, nil); err != nil {
		t.Fatal(err)
	}
	// Same Begin again: the same transaction; other content: refused.
	if again, err := coord.Begin(ctx, "t1", []string{"a", "b"}, []byte("p")); err != nil || again.ID() != "t1" {
		t.Fatalf("idempotent Begin: %v", err)
	}
	if _, err := coord.Begin(ctx, "t1", []string{"a", "b"}, []byte("other")); !errorsIs(err, twophase.ErrTxExists) {
		t.Fatalf("Begin with other payload: %v", err)
	}
	if _, err := coord.Begin(ctx, "t1", []string{"a"}, []byte("p")); !errorsIs(err, twophase.ErrTxExists) {
		t.Fatalf("Begin with other sites: %v", err)
	}
	if _, err := coord.Resume(ctx, "nope"); !errorsIs(err, twophase.ErrUnknownTx) {
		t.Fatalf("Resume unknown: %v", err)
	}

	as := connect(t, e.Addrs())
	a := newParticipant(t, as, root, "a")
	sctx, stop := context.WithCancel(ctx)
	var got []string
	var prop *twophase.Proposal
	for p := range a.Run(sctx).C {
		got = append(got, p.TxID())
		prop = p
		stop() // only t1 names a
	}
	stop()
	if fmt.Sprint(got) != "[t1]" || string(prop.Payload()) != "p" || prop.Voted() != 0 {
		t.Fatalf("site a got %v (payload %q, voted %v)", got, prop.Payload(), prop.Voted())
	}
	if !exists(t, cs, root+"/t1/a/alive") {
		t.Fatal("no liveness node for a")
	}
	if _, err := a.Lookup(ctx, "t2"); !errorsIs(err, twophase.ErrNotInTx) {
		t.Fatalf("Lookup foreign tx: %v", err)
	}
	if _, err := a.Lookup(ctx, "nope"); !errorsIs(err, twophase.ErrUnknownTx) {
		t.Fatalf("Lookup unknown tx: %v", err)
	}
	if err := prop.Vote(ctx, twophase.Commit); err != nil {
		t.Fatal(err)
	}
	if err := prop.Vote(ctx, twophase.Commit); err != nil {
		t.Fatalf("same vote again: %v", err)
	}
	if err := prop.Vote(ctx, twophase.Abort); !errorsIs(err, twophase.ErrVoteConflict) {
		t.Fatalf("other vote: %v", err)
	}
	if prop.Voted() != twophase.Commit {
		t.Fatalf("Voted() = %v", prop.Voted())
	}
	// Site a restarts on a new session: it finds t1 with its vote, and its
	// earlier liveness node (same site, older session) is replaced.
	closeSession(t, as)
	as2 := connect(t, e.Addrs())
	a2 := newParticipant(t, as2, root, "a")
	p2, err := a2.Lookup(ctx, "t1")
	if err != nil || p2.Voted() != twophase.Commit || p2.Decision() != 0 {
		t.Fatalf("restarted a: %v, voted %v", err, p2.Voted())
	}
	if err := p2.Vote(ctx, twophase.Abort); !errorsIs(err, twophase.ErrVoteConflict) {
		t.Fatalf("restarted a votes differently: %v", err)
	}
	// b votes abort through Lookup; the decision is abort.
	b := newParticipant(t, connect(t, e.Addrs()), root, "b")
	pb, err := b.Lookup(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if err := pb.Vote(ctx, twophase.Abort); err != nil {
		t.Fatal(err)
	}
	d, err := tx.Decide(ctx)
	if err != nil || d != twophase.Abort {
		t.Fatalf("decide: %v, %v", d, err)
	}
	// A decided transaction is still delivered to its sites until they
	// finish it.
	for _, c := range []struct {
		p    *twophase.Site
		want string
	}{{a2, "[t1]"}, {b, "[t1 t2]"}} {
		sctx, stop := context.WithCancel(ctx)
		var got []string
		for p := range c.p.Run(sctx).C {
			got = append(got, p.TxID())
			if p.TxID() == "t1" && p.Decision() != twophase.Abort {
				t.Errorf("t1 delivered with decision %v", p.Decision())
			}
			if fmt.Sprint(got) == c.want {
				stop()
			}
		}
		stop()
		if fmt.Sprint(got) != c.want {
			t.Errorf("site %s got %v, want %v", c.p.Site(), got, c.want)
		}
	}
	da, err := p2.Await(ctx)
	if err != nil {
		t.Fatal(err)
	}
	db, err := pb.Await(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*twophase.Proposal{p2, pb, p2} { // twice is fine
		if err := p.Finish(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if p, err := b.Lookup(ctx, "t1"); err != nil || !p.Finished() {
		t.Fatalf("b's t1 not finished: %v", err)
	}
	// Only t2 is left for b; Finish before its decision is refused.
	sctx, stop = context.WithCancel(ctx)
	for p := range b.Run(sctx).C {
		if p.TxID() != "t2" {
			t.Errorf("b got %s again after finishing it", p.TxID())
		}
		if err := p.Finish(ctx); !errorsIs(err, twophase.ErrNotDecided) {
			t.Errorf("Finish undecided: %v", err)
		}
		stop()
	}
	stop()
	checkInvariants(t, cs, root, "t1", []string{"a", "b"}, twophase.Abort,
		map[string]twophase.Decision{"coordinator": d, "a": da, "b": db})
	// Abort on a decided transaction returns its decision.
	if d, err := tx.Abort(ctx); err != nil || d != twophase.Abort {
		t.Fatalf("Abort after decision: %v, %v", d, err)
	}
}

// TestCollect: decided transactions are deleted after the retention
// period (on the servers' clock); undecided ones are aborted first.
func TestCollect(t *testing.T) {
	e := ensemble(t)
	ctx := testCtx(t, time.Minute)
	root := testRoot(t)
	cs := connect(t, e.Addrs())
	keep := newCoordinator(t, cs, root) // default retention: a day
	tx, err := keep.Begin(ctx, "decided", []string{"a"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := keep.Begin(ctx, "open", []string{"a", "b"}, nil); err != nil {
		t.Fatal(err)
	}
	// a is working on "open": its liveness node is there.
	a := newParticipant(t, connect(t, e.Addrs()), root, "a")
	if _, err := a.Lookup(ctx, "open"); err != nil {
		t.Fatal(err)
	}
	if n, err := keep.Collect(ctx); err != nil || n != 0 {
		t.Fatalf("Collect within retention: %d, %v", n, err)
	}
	short := newCoordinator(t, cs, root, twophase.WithRetention(time.Millisecond))
	waitFor(t, 10*time.Second, "decided collected", func() bool {
		if _, err := short.Collect(ctx); err != nil {
			t.Fatal(err)
		}
		return !exists(t, cs, root+"/decided")
	})
	// "open" was aborted by the first pass, then collected.
	waitFor(t, 10*time.Second, "open collected", func() bool {
		if _, err := short.Collect(ctx); err != nil {
			t.Fatal(err)
		}
		return !exists(t, cs, root+"/open")
	})
	if _, err := a.Lookup(ctx, "open"); !errorsIs(err, twophase.ErrUnknownTx) {
		t.Fatalf("Lookup collected: %v", err)
	}
	if _, err := tx.Decide(ctx); !errorsIs(err, twophase.ErrUnknownTx) {
		t.Fatalf("Decide collected: %v", err)
	}
}
