package twophase_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
	"github.com/zkrecipes/zkrecipes/twophase"
)

// The two tests below aim one race each: a decision node created by one
// party between another party's last look and its own create. The late
// party's link delays every reply and event by lag, so what the server
// did after that look reaches it only after its create was sent; its
// create then meets NodeExists, and it must return what the node says.
// Guarantee (package doc, Invariants): whoever creates the decision node
// decides, and everyone else, coordinator included, reads it.
const (
	raceLag = time.Second
	// A session that rides out raceLag on every reply: go-zookeeper's
	// read timeout is 2/3 of it, its ping interval 1/3.
	raceSessionTimeout = 6 * time.Second
	raceDeadline       = 4 * time.Second
	raceAttempts       = 3
)

type decided struct {
	d   twophase.Decision
	err error
}

// TestAwaitDeadlineReadsTheDecision: the coordinator's Commit is created
// half the lag before a site's deadline, so its watch event reaches the
// site half the lag after it. Await, past its deadline, tries to write
// Abort, finds Commit there and must return Commit: a site told Abort
// while the node says Commit would undo what every other site commits.
// The aim is confirmed when the site sent its own create of the decision
// and the coordinator's Decide returned Commit; otherwise the trial aims
// again with a transaction of its own (at most raceAttempts), then fails
// as not exercised.
func TestAwaitDeadlineReadsTheDecision(t *testing.T) {
	e := ensemble(t)
	ctx := testCtx(t, 2*time.Minute)
	root := testRoot(t)
	coord := newCoordinator(t, connect(t, e.Addrs()), root)
	for attempt := 1; ; attempt++ {
		txID := fmt.Sprintf("t%d", attempt)
		link := raceLink(t, e, fmt.Sprintf("twophase-await-%d", attempt))
		ps, counter := testutil.CountedSession(t, link.Addrs(), recipes.WithSessionTimeout(raceSessionTimeout))
		site := newParticipant(t, ps, root, "a", twophase.WithDeadline(raceDeadline))
		tx, err := coord.Begin(ctx, txID, []string{"a"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := site.Lookup(ctx, txID)
		if err != nil {
			t.Fatal(err)
		}
		if err := pr.Vote(ctx, twophase.Commit); err != nil {
			t.Fatal(err)
		}
		before := counter.Snapshot()
		awaited := make(chan decided, 1)
		go func() {
			d, err := pr.Await(ctx)
			awaited <- decided{d, err}
		}()
		// Await's two exists (the decision watch, the transaction) are
		// answered before the lag begins.
		waitFor(t, 10*time.Second, "Await's watch armed", func() bool {
			d := counter.Snapshot().Sub(before)
			return d.Req(zkcount.OpExists) >= 2 && d.Replies >= 2
		})
		if err := link.Latency(raceLag, 0); err != nil {
			t.Fatal(err)
		}
		aimAt(ctx, t, pr.Deadline().Add(-raceLag/2))
		d, err := tx.Decide(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r := receive(t, awaited, "Await")
		creates := counter.Snapshot().Sub(before).Req(zkcount.OpCreate)
		if err := link.Heal(); err != nil {
			t.Fatal(err)
		}
		if d != twophase.Commit || creates != 1 {
			if attempt == raceAttempts {
				t.Fatalf("not exercised in %d attempts (last: decision %v, the site's creates %d; want commit and 1)", raceAttempts, d, creates)
			}
			t.Logf("attempt %d missed its aim (decision %v, the site's creates %d): again", attempt, d, creates)
			continue
		}
		if r.err != nil || r.d != twophase.Commit {
			t.Fatalf("Await past its deadline = %v, %v; the decision node says commit", r.d, r.err)
		}
		t.Logf("attempt %d: the site's deadline abort met the coordinator's commit and Await returned it", attempt)
		return
	}
}

// TestDecideReturnsTheDecision: every site voted commit, and a site's
// deadline Abort lands after Decide's last look at the decision node
// (its watch event is delayed on the coordinator's link) and before
// Decide's create. Decide's rule says Commit, its create meets NodeExists,
// and it must return Abort, what the node says: a coordinator that reports
// Commit while every site aborts breaks the Invariant of Tx.Decide. The
// aim is confirmed when the coordinator sent its create and the node holds
// the site's deadline abort; otherwise the trial aims again with a
// transaction of its own (at most raceAttempts), then fails as not
// exercised.
func TestDecideReturnsTheDecision(t *testing.T) {
	e := ensemble(t)
	ctx := testCtx(t, 2*time.Minute)
	root := testRoot(t)
	for attempt := 1; ; attempt++ {
		txID := fmt.Sprintf("t%d", attempt)
		link := raceLink(t, e, fmt.Sprintf("twophase-decide-%d", attempt))
		cs, counter := testutil.CountedSession(t, link.Addrs(), recipes.WithSessionTimeout(raceSessionTimeout))
		tx, err := newCoordinator(t, cs, root).Begin(ctx, txID, []string{"a"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		site := newParticipant(t, connect(t, e.Addrs()), root, "a", twophase.WithDeadline(raceDeadline))
		pr, err := site.Lookup(ctx, txID)
		if err != nil {
			t.Fatal(err)
		}
		before := counter.Snapshot()
		decidedCh := make(chan decided, 1)
		go func() {
			d, err := tx.Decide(ctx)
			decidedCh <- decided{d, err}
		}()
		// Decide's exists of the decision and its child watch on the site
		// are answered before the lag begins.
		waitFor(t, 10*time.Second, "Decide's watches armed", func() bool {
			d := counter.Snapshot().Sub(before)
			lists := d.Req(zkcount.OpGetChildren) + d.Req(zkcount.OpGetChildren2)
			return d.Req(zkcount.OpExists) >= 1 && lists >= 1 && d.Replies >= 2
		})
		if err := link.Latency(raceLag, 0); err != nil {
			t.Fatal(err)
		}
		// The vote lands half the lag before the site's deadline: Decide
		// hears of it half the lag after the site decided Abort.
		aimAt(ctx, t, pr.Deadline().Add(-raceLag/2))
		if err := pr.Vote(ctx, twophase.Commit); err != nil {
			t.Fatal(err)
		}
		siteD, err := pr.Await(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r := receive(t, decidedCh, "Decide")
		creates := counter.Snapshot().Sub(before).Req(zkcount.OpCreate)
		if err := link.Heal(); err != nil {
			t.Fatal(err)
		}
		data, _, err := cs.Conn().Get(tx.Path() + "/decision")
		if err != nil {
			t.Fatal(err)
		}
		byDeadline := strings.Contains(string(data), "before its deadline")
		if siteD != twophase.Abort || !byDeadline || creates != 1 {
			if attempt == raceAttempts {
				t.Fatalf("not exercised in %d attempts (last: the site's decision %v, node %q, the coordinator's creates %d; want the site's deadline abort and 1)", raceAttempts, siteD, data, creates)
			}
			t.Logf("attempt %d missed its aim (the site's decision %v, node %q, the coordinator's creates %d): again", attempt, siteD, data, creates)
			continue
		}
		if r.err != nil || r.d != twophase.Abort {
			t.Fatalf("Decide = %v, %v; the decision node says abort (%q)", r.d, r.err, data)
		}
		t.Logf("attempt %d: Decide's commit met the site's deadline abort and Decide returned it", attempt)
		return
	}
}

// raceLink is a Link of the test's own, closed at its end.
func raceLink(t *testing.T, e *testenv.Ensemble, name string) *testenv.Link {
	t.Helper()
	link, err := e.NewLink(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = link.Close() })
	return link
}

// aimAt returns at the instant at: a fault's aim, not a wait for a
// condition.
func aimAt(ctx context.Context, t *testing.T, at time.Time) {
	t.Helper()
	timer := time.NewTimer(time.Until(at))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
}

// receive returns what ch delivers within a minute.
func receive(t *testing.T, ch <-chan decided, what string) decided {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(time.Minute):
		t.Fatalf("%s did not return within a minute", what)
		return decided{}
	}
}
