package leader_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/leader"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestRunBacksOffWhenFnFails: a function that fails at once does not make
// Run spin creating and deleting its node: over 2 s the default back-off
// (100 ms doubling, jittered down to half, capped) allows at most 6 terms.
func TestRunBacksOffWhenFnFails(t *testing.T) {
	e := shared(t)
	path := testPath(t)
	ps := newParticipants(t, 1, e.Addrs(), path)
	mkdir(t, ps[0].s, path)
	ctx, cancel := context.WithTimeout(ctxT(t, time.Minute), 2*time.Second)
	defer cancel()
	before := ps[0].c.Snapshot()
	var calls, reported atomic.Int64
	boom := errors.New("boom")
	err := leader.Run(ctx, ps[0].el, func(context.Context) error {
		calls.Add(1)
		return boom
	}, leader.WithErrorHandler(func(err error) {
		if errors.Is(err, boom) {
			reported.Add(1)
		}
	}))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run: %v, want the deadline", err)
	}
	creates := ps[0].c.Snapshot().Sub(before).Req(zkcount.OpCreate)
	t.Logf("2 s of a failing fn: %d terms, %d creates", calls.Load(), creates)
	if creates > 6 || calls.Load() > 6 {
		t.Fatalf("2 s of a failing fn cost %d creates (%d terms), want at most 6", creates, calls.Load())
	}
	if calls.Load() < 2 || reported.Load() != calls.Load() {
		t.Fatalf("%d terms, %d errors reported: want at least 2 terms, each error reported", calls.Load(), reported.Load())
	}
}

// TestTextOrderSharesLine: participants ordering by text (the dialect's
// TextOrder variant, as Curator and kazoo do) and by serial arithmetic share one line before the
// counter wraps: the same order, and hand-off in it. (The wrap itself takes
// 2^31 creates under one parent and is covered by the recipes package's
// table test of the ordering.)
func TestTextOrderSharesLine(t *testing.T) {
	e := shared(t)
	path := testPath(t)
	ps := newParticipants(t, 3, e.Addrs(), path)
	ps[1].el = newElection(t, ps[1].s, path, withID("b"), leader.WithDialect(recipes.Curator.TextOrder()))
	ctx := ctxT(t, time.Minute)
	terms := campaignAll(t, ctx, ps)
	t0 := <-terms[0]
	var serial, text []string
	for _, el := range []*leader.Election{ps[0].el, ps[1].el} {
		all, err := el.Participants(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range all {
			if el == ps[0].el {
				serial = append(serial, p.ID)
			} else {
				text = append(text, p.ID)
			}
		}
	}
	if !slices.Equal(serial, []string{"a", "b", "c"}) || !slices.Equal(text, serial) {
		t.Fatalf("line: serial %v, text %v; want a b c in both", serial, text)
	}
	if err := t0.Release(ctx); err != nil {
		t.Fatal(err)
	}
	t1 := <-terms[1]
	if err := t1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	t2 := <-terms[2]
	if err := t2.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
