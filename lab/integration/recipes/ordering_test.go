package recipes_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestRevokedAfterContextDone backs the first of Holding's orderings: a
// holder that receives from Revoked() finds Context() already done, with
// cause ErrRevoked, without waiting. Each round revokes a fresh holding
// from another session and checks at the very moment Revoked returns; the
// opposite order (Revoked closed first) leaves a window in which Context
// still looks live.
func TestRevokedAfterContextDone(t *testing.T) {
	ensemble(t)
	s := connect(t, zkServers())
	other := connect(t, zkServers())
	ctx := testutil.Ctx(t, 2*time.Minute)
	path := testPath(t)
	for round := range 20 {
		h, err := recipes.Acquire(ctx, s, recipes.Spec{Path: path, Revocable: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.Conn().Set(h.Path(), recipes.RevokeMessage, -1); err != nil {
			t.Fatal(err)
		}
		select {
		case <-h.Revoked():
		case <-ctx.Done():
			t.Fatalf("round %d: Revoked not closed", round)
		}
		if err := context.Cause(h.Context()); !errors.Is(err, recipes.ErrRevoked) {
			t.Fatalf("round %d: Revoked closed while Context's cause is %v, want ErrRevoked", round, err)
		}
		if err := h.Release(ctx); !errors.Is(err, recipes.ErrRevoked) {
			t.Fatalf("round %d: Release after the revocation = %v", round, err)
		}
	}
}
