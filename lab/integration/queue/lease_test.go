package queue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestClaimEndsWithLease: a claim is a holding like a lock's, so its
// Context ends at the Session's lease deadline, before the server can
// expire the session and hand the item to another consumer, even under
// StepDownOnLost (where nothing else ends it until the session is lost).
func TestClaimEndsWithLease(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	link, err := e.NewLink("lease")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = link.Close() })
	s := connect(t, link.Addrs(), recipes.WithLossPolicy(recipes.StepDownOnLost))
	q := newQueue(t, s, path)
	if _, err := q.Put(ctx, []byte("item")); err != nil {
		t.Fatal(err)
	}
	c, err := q.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stateAtEnd := make(chan recipes.State, 1)
	context.AfterFunc(c.Context(), func() { stateAtEnd <- s.State() })
	if err := link.Blackhole(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Context().Done():
	case <-ctx.Done():
		t.Fatal("the claim outlived its lease")
	}
	if cause := context.Cause(c.Context()); !errors.Is(cause, recipes.ErrLeaseExpired) {
		t.Errorf("claim ended with %v, want ErrLeaseExpired", cause)
	}
	if st := <-stateAtEnd; st == recipes.StateLost || st == recipes.StateClosed {
		t.Errorf("the claim ended only once the session was %v", st)
	}
	if err := link.Heal(); err != nil {
		t.Fatal(err)
	}
	_ = c.Release(ctx)
}
