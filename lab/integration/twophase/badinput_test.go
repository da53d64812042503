package twophase_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/twophase"
)

// TestBadInput: invalid roots, ids, sites, payloads and votes, done
// contexts and closed sessions fail before anything is written.
func TestBadInput(t *testing.T) {
	e := ensemble(t)
	s := connect(t, e.Addrs())
	ctx := testCtx(t, 30*time.Second)
	root := testRoot(t)

	for _, bad := range []string{"", "relative", "/trailing/", "/a/../b", "/a//b", "/", "/zookeeper/x", "/nul\x00"} {
		if c, err := twophase.NewCoordinator(s, bad); c != nil || !errors.Is(err, recipes.ErrInvalidPath) {
			t.Errorf("coordinator root %q: %v", bad, err)
		}
		if p, err := twophase.NewSite(s, bad, "a"); p != nil || !errors.Is(err, recipes.ErrInvalidPath) {
			t.Errorf("participant root %q: %v", bad, err)
		}
	}
	for _, bad := range []string{"", "a/b", ".", "..", "decision", "x\x01"} {
		if p, err := twophase.NewSite(s, root, bad); p != nil || !errors.Is(err, twophase.ErrBadSite) {
			t.Errorf("participant site %q: %v", bad, err)
		}
	}
	c := newCoordinator(t, s, root)
	for _, bad := range []string{"", "a/b", ".", "..", "tab\t"} {
		if _, err := c.Begin(ctx, bad, []string{"a"}, nil); !errors.Is(err, twophase.ErrBadTxID) {
			t.Errorf("Begin tx %q: %v", bad, err)
		}
		if _, err := c.Resume(ctx, bad); !errors.Is(err, twophase.ErrBadTxID) {
			t.Errorf("Resume tx %q: %v", bad, err)
		}
	}
	for _, bad := range [][]string{nil, {}, {"a", "a"}, {"a", ""}, {"decision"}, {"a/b"}, {".."}} {
		if _, err := c.Begin(ctx, "t", bad, nil); !errors.Is(err, twophase.ErrBadSite) {
			t.Errorf("Begin sites %q: %v", bad, err)
		}
	}
	if _, err := c.Begin(ctx, "t", []string{"a"}, make([]byte, s.MaxData()+1)); !errors.Is(err, recipes.ErrDataTooLarge) {
		t.Errorf("Begin with a large payload: %v", err)
	}
	// The whole multi counts: a payload at the limit no longer fits with
	// its site nodes.
	if _, err := c.Begin(ctx, "t", []string{"a", "b"}, make([]byte, s.MaxData()-100)); !errors.Is(err, recipes.ErrDataTooLarge) {
		t.Errorf("Begin with a multi over the limit: %v", err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Begin(done, "t", []string{"a"}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Begin with a done ctx: %v", err)
	}
	if exists(t, s, root) {
		t.Fatal("bad input wrote the root")
	}

	tx, err := c.Begin(ctx, "t", []string{"a"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, s.MaxData()-400)
	if bt, err := c.Begin(ctx, "big", []string{"a", "b"}, big); err != nil || len(bt.Payload()) != len(big) {
		t.Fatalf("Begin with a payload under the limit: %v", err)
	}
	if bp, err := newParticipant(t, s, root, "b").Lookup(ctx, "big"); err != nil || len(bp.Payload()) != len(big) {
		t.Fatalf("Lookup of a large payload: %v", err)
	}
	p := newParticipant(t, s, root, "a")
	prop, err := p.Lookup(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []twophase.Decision{0, 3, -1} {
		if err := prop.Vote(ctx, bad); !errors.Is(err, twophase.ErrBadDecision) {
			t.Errorf("Vote(%v): %v", bad, err)
		}
	}
	if err := prop.Vote(done, twophase.Commit); !errors.Is(err, context.Canceled) {
		t.Errorf("Vote with a done ctx: %v", err)
	}
	if _, err := tx.Decide(done); !errors.Is(err, context.Canceled) {
		t.Errorf("Decide with a done ctx: %v", err)
	}
	if _, err := prop.Await(done); !errors.Is(err, context.Canceled) {
		t.Errorf("Await with a done ctx: %v", err)
	}
	if exists(t, s, root+"/t/a/vote") || exists(t, s, root+"/t/decision") {
		t.Fatal("a call with a done ctx wrote")
	}
	// Corrupt vote data is reported, not taken for a vote.
	if _, err := s.Conn().Create(root+"/t/a/vote", []byte("maybe"), 0, s.ACL()); err != nil {
		t.Fatal(err)
	}
	if err := prop.Vote(ctx, twophase.Commit); !errors.Is(err, twophase.ErrCorrupt) {
		t.Errorf("Vote over corrupt data: %v", err)
	}
	if _, err := tx.Decide(ctx); !errors.Is(err, twophase.ErrCorrupt) || !strings.Contains(err.Error(), "maybe") {
		t.Errorf("Decide over a corrupt vote: %v", err)
	}

	// A closed session.
	closeSession(t, s)
	if _, err := c.Begin(ctx, "t2", []string{"a"}, nil); !errors.Is(err, recipes.ErrClosed) {
		t.Errorf("Begin on a closed session: %v", err)
	}
	if err := prop.Vote(ctx, twophase.Commit); !errors.Is(err, recipes.ErrClosed) {
		t.Errorf("Vote on a closed session: %v", err)
	}
	if _, err := prop.Await(ctx); !errors.Is(err, recipes.ErrClosed) {
		t.Errorf("Await on a closed session: %v", err)
	}
	stream := p.Run(ctx)
	if _, ok := <-stream.C; ok || !errors.Is(stream.Err(), recipes.ErrClosed) {
		t.Errorf("Run on a closed session: delivered, or Err %v", stream.Err())
	}
}

// TestPlantedRootChildren: Pending lists only transactions made by Begin,
// not a node planted at the root without site nodes (one named
// "decision", as the layout's decision node, and one named like a
// transaction): before, Pending listed both. Collect aborts and deletes
// the real undecided transaction and leaves the planted nodes alone
// (before, it wrote a decision under them and then deleted them).
func TestPlantedRootChildren(t *testing.T) {
	e := ensemble(t)
	s := connect(t, e.Addrs())
	ctx := testCtx(t, 30*time.Second)
	root := testRoot(t)
	c := newCoordinator(t, s, root, twophase.WithRetention(time.Millisecond))
	if _, err := c.Begin(ctx, "t1", []string{"a"}, nil); err != nil {
		t.Fatal(err)
	}
	planted := []string{"decision", "t0"}
	for _, name := range planted {
		if _, err := s.Conn().Create(root+"/"+name, []byte("commit"), 0, testutil.ACL()); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := c.Pending(ctx); err != nil || !slices.Equal(got, []string{"t1"}) {
		t.Fatalf("Pending = %q, %v; want [t1]", got, err)
	}
	// Collect aborts t1 once it is a retention period old, and deletes it
	// a retention period after that.
	waitFor(t, 10*time.Second, "t1 collected", func() bool {
		if _, err := c.Collect(ctx); err != nil {
			t.Fatal(err)
		}
		return !exists(t, s, root+"/t1")
	})
	for _, name := range planted {
		if kids, _, err := s.Conn().Children(root + "/" + name); err != nil || len(kids) != 0 {
			t.Errorf("planted %s: children %q, %v; want left alone", name, kids, err)
		}
	}
	if got, err := c.Pending(ctx); err != nil || len(got) != 0 {
		t.Fatalf("Pending after Collect = %q, %v; want none", got, err)
	}
}
