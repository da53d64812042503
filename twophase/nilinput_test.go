package twophase_test

import (
	"context"
	"errors"
	"testing"

	"github.com/zkrecipes/zkrecipes/twophase"
)

// TestNilReceivers: nil receivers fail with ErrNilReceiver, never panic.
func TestNilReceivers(t *testing.T) {
	ctx := context.Background()
	var nc *twophase.Coordinator
	var ntx *twophase.Tx
	var np *twophase.Site
	var nprop *twophase.Proposal
	for name, err := range map[string]error{
		"Coordinator.Begin":   second(nc.Begin(ctx, "t", []string{"a"}, nil)),
		"Coordinator.Resume":  second(nc.Resume(ctx, "t")),
		"Coordinator.Pending": second(nc.Pending(ctx)),
		"Coordinator.Collect": second(nc.Collect(ctx)),
		"Tx.Decide":           second(ntx.Decide(ctx)),
		"Tx.Abort":            second(ntx.Abort(ctx)),
		"Site.Lookup":         second(np.Lookup(ctx, "t")),
		"Proposal.Vote":       nprop.Vote(ctx, twophase.Commit),
		"Proposal.Await":      second(nprop.Await(ctx)),
	} {
		if !errors.Is(err, twophase.ErrNilReceiver) {
			t.Errorf("%s on nil: %v", name, err)
		}
	}
	nstream := np.Run(ctx)
	if _, ok := <-nstream.C; ok || !errors.Is(nstream.Err(), twophase.ErrNilReceiver) {
		t.Fatalf("nil Site: delivered, or Err %v", nstream.Err())
	}
	_, _, err := ntx.Decision(ctx)
	if !errors.Is(err, twophase.ErrNilReceiver) {
		t.Errorf("Tx.Decision on nil: %v", err)
	}
	// Accessors on nil values return zero values.
	if ntx.ID() != "" || ntx.Sites() != nil || nprop.TxID() != "" || nprop.Voted() != 0 || np.Site() != "" || nc.Root() != "" {
		t.Error("accessors on nil returned non-zero values")
	}
}

func second[T any](_ T, err error) error { return err }
