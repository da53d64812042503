package queue_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestIdleClaimNoGoroutine: a held claim has no goroutine of its own (the
// Session's event callback fires the watch on its claim node), and still
// ends at once when someone deletes its claim node. 20 claims held by one
// consumer: the goroutines running recipes or queue code must be as many
// as with none.
func TestIdleClaimNoGoroutine(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	s := connect(t, e.Addrs())
	admin := connect(t, e.Addrs())
	q := newQueue(t, s, path)
	count := func() int {
		return len(testutil.Goroutines(func(stack string) bool {
			return strings.Contains(stack, "zkrecipes/recipes.") || strings.Contains(stack, "zkrecipes/queue.")
		}))
	}
	const n = 20
	for i := 0; i < n; i++ {
		if _, err := q.Put(ctx, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	before := testutil.SteadyCount(count)
	var claims []*queue.Claim
	for i := 0; i < n; i++ {
		c, err := q.Claim(ctx)
		if err != nil {
			t.Fatal(err)
		}
		claims = append(claims, c)
	}
	if got := testutil.SteadyCount(count) - before; got != 0 {
		t.Errorf("%d goroutines running recipes or queue code with %d claims held, want 0 more than with none", got, n)
	}
	if err := admin.Conn().Delete(path+"/taken/"+claims[0].Item().Name, -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-claims[0].Context().Done():
	case <-ctx.Done():
		t.Fatal("the claim whose node was deleted did not end")
	}
	if cause := context.Cause(claims[0].Context()); !errors.Is(cause, queue.ErrClaimLost) || !errors.Is(cause, recipes.ErrNodeDeleted) {
		t.Errorf("claim ended with %v, want ErrClaimLost and recipes.ErrNodeDeleted", cause)
	}
	for i, c := range claims[1:] {
		if err := context.Cause(c.Context()); err != nil {
			t.Errorf("claim %d ended: %v", i+1, err)
		}
		if err := c.Ack(ctx); err != nil {
			t.Errorf("Ack %d: %v", i+1, err)
		}
	}
}
