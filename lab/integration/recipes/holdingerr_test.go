package recipes_test

import (
	"errors"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestHoldingErrSeesDeletion: a holder that polls Err() (and never calls
// Context()) learns that its node was deleted by someone else. Err arms
// the node's watch on its first call; before it did, Err stayed nil for
// as long as the session lived.
func TestHoldingErrSeesDeletion(t *testing.T) {
	s := connect(t, zkServers())
	other := connect(t, zkServers())
	ctx := testutil.Ctx(t, time.Minute)
	h, err := recipes.Acquire(ctx, s, recipes.Spec{Path: testPath(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = h.Release(ctx) }()
	if err := h.Err(); err != nil {
		t.Fatalf("Err right after acquiring: %v", err)
	}
	// The first Err armed the watch from a background goroutine. Whether
	// the delete lands before it is set (the getData finds no node) or
	// after (the watch fires), the holding ends with ErrNodeDeleted.
	if err := other.Conn().Delete(h.Path(), -1); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "Err to report the deletion", func() bool { return h.Err() != nil })
	if err := h.Err(); !errors.Is(err, recipes.ErrNodeDeleted) {
		t.Fatalf("Err after another session deleted our node: %v, want ErrNodeDeleted", err)
	}
}
