package twophase_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/twophase"
)

// TestDoneCtxSendsNothingCounted: every entry point called with a done ctx
// returns its cause and sends no request (counted on the wire).
func TestDoneCtxSendsNothingCounted(t *testing.T) {
	e := ensemble(t)
	ctx := testCtx(t, time.Minute)
	s, counter := testutil.CountedSession(t, e.Addrs(), recipes.WithSessionTimeout(sessionTimeout))
	root := testRoot(t)
	c := newCoordinator(t, s, root)
	tx, err := c.Begin(ctx, "t", []string{"a"}, []byte("p"))
	if err != nil {
		t.Fatal(err)
	}
	p := newParticipant(t, s, root, "a")
	prop, err := p.Lookup(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	before := counter.Snapshot()
	for name, err := range map[string]error{
		"Begin":    second(c.Begin(done, "t2", []string{"a"}, nil)),
		"Resume":   second(c.Resume(done, "t")),
		"Pending":  second(c.Pending(done)),
		"Collect":  second(c.Collect(done)),
		"Decide":   second(tx.Decide(done)),
		"Abort":    second(tx.Abort(done)),
		"Lookup":   second(p.Lookup(done, "t")),
		"Vote":     prop.Vote(done, twophase.Commit),
		"Await":    second(prop.Await(done)),
		"Finish":   prop.Finish(done),
		"Decision": func() error { _, _, err := tx.Decision(done); return err }(),
	} {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a done ctx: %v", name, err)
		}
	}
	if stream := p.Run(done); func() bool { _, ok := <-stream.C; return ok }() || !errors.Is(stream.Err(), context.Canceled) {
		t.Errorf("Run with a done ctx: delivered, or Err %v", stream.Err())
	}
	if d := counter.Snapshot().Sub(before); d.Total() != 0 {
		t.Errorf("calls with a done ctx sent %v", d.Requests)
	}
}

// TestBeginLeavesRoomToCollect: Begin refuses a transaction whose own
// multi fits the server's limit but whose Collect multi (every site's
// alive, vote and done nodes too) would not: the server would drop the
// connection on every Collect, which would retry it forever.
func TestBeginLeavesRoomToCollect(t *testing.T) {
	e := ensemble(t)
	ctx := testCtx(t, time.Minute)
	const limit = 4096
	s, counter := testutil.CountedSession(t, e.Addrs(), recipes.WithSessionTimeout(sessionTimeout), recipes.WithMaxData(limit))
	root := testRoot(t)
	c := newCoordinator(t, s, root)
	txPath := root + "/t"
	// The layout of package doc: find a site count whose Begin multi fits
	// and whose Collect multi does not.
	var sites []string
	for n := 1; ; n++ {
		sites = sites[:0]
		var begin, collect []any
		begin = append(begin, &zk.CreateRequest{Path: txPath, Acl: s.ACL()})
		for i := range n {
			site := fmt.Sprintf("site-%04d", i)
			sites = append(sites, site)
			begin = append(begin, &zk.CreateRequest{Path: txPath + "/" + site, Acl: s.ACL()})
			for _, k := range []string{"/alive", "/vote", "/done", ""} {
				collect = append(collect, &zk.DeleteRequest{Path: txPath + "/" + site + k, Version: -1})
			}
		}
		collect = append(collect, &zk.DeleteRequest{Path: txPath + "/decision"}, &zk.DeleteRequest{Path: txPath})
		b, _ := recipes.MultiSize(begin...)
		cl, _ := recipes.MultiSize(collect...)
		if b > limit {
			t.Fatal("no such site count")
		}
		if cl > limit {
			break
		}
	}
	before := counter.Snapshot()
	if _, err := c.Begin(ctx, "t", sites, nil); !errors.Is(err, recipes.ErrDataTooLarge) {
		t.Fatalf("Begin of %d sites: %v", len(sites), err)
	}
	if d := counter.Snapshot().Sub(before); d.Total() != 0 {
		t.Errorf("refused Begin sent %v", d.Requests)
	}
	if _, err := c.Begin(ctx, "t", sites[:len(sites)/2], nil); err != nil {
		t.Fatalf("Begin of %d sites: %v", len(sites)/2, err)
	}
}

// TestLongRootSendsNothing: a root so long that no transaction node under
// it fits a request is refused by the constructors, and one whose
// transactions' multi cannot fit is refused by Begin, before anything is
// sent.
func TestLongRootSendsNothing(t *testing.T) {
	e := ensemble(t)
	ctx := testCtx(t, time.Minute)
	s, counter := testutil.CountedSession(t, e.Addrs(), recipes.WithSessionTimeout(sessionTimeout))
	for _, root := range []string{"/" + strings.Repeat("r", 1<<20), "/" + strings.Repeat("r", recipes.MaxPathLen-1)} {
		before := counter.Snapshot()
		if _, err := twophase.NewCoordinator(s, root); !errors.Is(err, recipes.ErrDataTooLarge) {
			t.Errorf("NewCoordinator under a root of %d bytes: %.200v", len(root), err)
		}
		if _, err := twophase.NewSite(s, root, "a"); !errors.Is(err, recipes.ErrDataTooLarge) {
			t.Errorf("NewSite under a root of %d bytes: %.200v", len(root), err)
		}
		if d := counter.Snapshot().Sub(before); d.Total() != 0 || d.Connects != 0 {
			t.Errorf("root of %d bytes: sent %v, %d reconnections", len(root), d.Requests, d.Connects)
		}
	}
	// A transaction node fits, but not Begin's multi (the transaction and
	// its site node, each with the root in its path).
	root := "/" + strings.Repeat("r", s.MaxData()-200)
	before := counter.Snapshot()
	start := time.Now()
	c := newCoordinator(t, s, root)
	if _, err := c.Begin(ctx, "t", []string{"a"}, nil); !errors.Is(err, recipes.ErrDataTooLarge) {
		t.Errorf("Begin under a root of %d bytes: %.200v", len(root), err)
	}
	if time.Since(start) > time.Second {
		t.Errorf("refused after %v", time.Since(start))
	}
	if d := counter.Snapshot().Sub(before); d.Total() != 0 || d.Connects != 0 {
		t.Errorf("root of %d bytes: sent %v, %d reconnections", len(root), d.Requests, d.Connects)
	}
}
