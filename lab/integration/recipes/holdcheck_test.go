package recipes_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestHoldingCheck: Check is true for a holding whose node stands, and
// the watch it set ends the holding on a later deletion; false, with the
// holding ended, when the node was deleted or written by someone else
// before it; after Context armed the watch it still checks the node (by
// exists); a done ctx sends nothing and returns ctx's error.
func TestHoldingCheck(t *testing.T) {
	s := connect(t, zkServers())
	other := connect(t, zkServers())
	ctx := testutil.Ctx(t, time.Minute)
	n := 0
	acquire := func() *recipes.Holding { // each case under its own parent
		t.Helper()
		n++
		h, err := recipes.Acquire(ctx, s, recipes.Spec{Path: fmt.Sprintf("%s-%d", testPath(t), n)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Release(ctx) })
		return h
	}

	// A standing node: true; the watch Check set sees a later deletion.
	h := acquire()
	if ok, err := h.Check(ctx); !ok || err != nil {
		t.Fatalf("Check on a standing holding = %v, %v", ok, err)
	}
	if err := other.Conn().Delete(h.Path(), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the watch Check set did not end the holding on deletion")
	}
	if err := context.Cause(h.Context()); !errors.Is(err, recipes.ErrNodeDeleted) {
		t.Fatalf("cause %v, want ErrNodeDeleted", err)
	}

	// Deleted before Check: false, the holding ended.
	h = acquire()
	if err := other.Conn().Delete(h.Path(), -1); err != nil {
		t.Fatal(err)
	}
	if ok, err := h.Check(ctx); ok || err != nil {
		t.Fatalf("Check after a deletion = %v, %v; want false, nil", ok, err)
	}
	if !errors.Is(h.Err(), recipes.ErrNodeDeleted) {
		t.Fatalf("holding after a failed Check: %v, want ErrNodeDeleted", h.Err())
	}

	// Written before Check: false, revoked.
	h = acquire()
	if _, err := other.Conn().Set(h.Path(), []byte("x"), -1); err != nil {
		t.Fatal(err)
	}
	if ok, err := h.Check(ctx); ok || err != nil {
		t.Fatalf("Check after a write = %v, %v; want false, nil", ok, err)
	}
	if !errors.Is(h.Err(), recipes.ErrRevoked) {
		t.Fatalf("holding after a write: %v, want ErrRevoked", h.Err())
	}

	// Watch set by Context first: Check reads the node (exists).
	h = acquire()
	_ = h.Context()
	if ok, err := h.Check(ctx); !ok || err != nil {
		t.Fatalf("Check after Context = %v, %v", ok, err)
	}
	if err := other.Conn().Delete(h.Path(), -1); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the holding to end", func() bool { return h.Err() != nil })
	if ok, err := h.Check(ctx); ok || err != nil {
		t.Fatalf("Check after Context and a deletion = %v, %v; want false, nil", ok, err)
	}

	// A done ctx: its error, nothing sent.
	h = acquire()
	done, cancel := context.WithCancel(ctx)
	cancel()
	if ok, err := h.Check(done); ok || !errors.Is(err, context.Canceled) {
		t.Fatalf("Check with a done ctx = %v, %v", ok, err)
	}
	var nilH *recipes.Holding
	if _, err := nilH.Check(ctx); !errors.Is(err, recipes.ErrBadArgument) {
		t.Fatalf("Check on a nil Holding: %v", err)
	}
}
