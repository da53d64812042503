package lock_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestIdleHoldingNoGoroutine backs Holding.Context's doc: an idle holding
// whose Context was asked has no goroutine of its own (the Session's event
// callback fires its node watch), and it still ends at once when someone
// deletes its node or asks for a revocation. 40 locks on distinct paths are
// held by one session with their Context asked: the goroutines running
// recipes or lock code must be as many as with no lock held.
func TestIdleHoldingNoGoroutine(t *testing.T) {
	testutil.RequireHooks(t)
	e := ensemble(t)
	ctx := testutil.Ctx(t, time.Minute)
	s := connect(t, e.Addrs())
	admin := connect(t, e.Addrs())
	count := func() int {
		return len(testutil.Goroutines(func(stack string) bool {
			return strings.Contains(stack, "zkrecipes/recipes.") || strings.Contains(stack, "zkrecipes/lock.")
		}))
	}
	armed := func() int { n, _ := hooks.WatchStats(s); return n }
	before, armedBefore := testutil.SteadyCount(count), armed()

	const n = 40
	var ms []*lock.Mutex
	var ctxs []context.Context
	for i := 0; i < n; i++ {
		m := newMutex(t, s, fmt.Sprintf("%s/l%02d", testPath(t), i))
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
		ctxs = append(ctxs, m.Context())
	}
	if got := testutil.SteadyCount(count) - before; got != 0 {
		t.Errorf("%d goroutines running recipes or lock code with %d idle holdings, want 0 more than with none", got, n)
	}
	if got := armed() - armedBefore; got != n {
		t.Errorf("%d data watches in the Session's registry for %d holdings, want one each", got, n)
	}
	for _, c := range ctxs {
		if err := context.Cause(c); err != nil {
			t.Fatalf("a holding ended while idle: %v", err)
		}
	}

	// The watches still work: a deletion by someone else ends the first
	// holding, a revocation request the second; the others stay.
	if err := admin.Conn().Delete(ms[0].Node(), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Conn().Set(ms[1].Node(), recipes.RevokeMessage, -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctxs[0].Done():
	case <-ctx.Done():
		t.Fatal("the holding whose node was deleted did not end")
	}
	if cause := context.Cause(ctxs[0]); !errors.Is(cause, recipes.ErrNodeDeleted) {
		t.Errorf("deleted holding ended with %v, want ErrNodeDeleted", cause)
	}
	select {
	case <-ms[1].Revoked():
	case <-ctx.Done():
		t.Fatal("the revoked holding was not told")
	}
	if cause := context.Cause(ctxs[1]); !errors.Is(cause, recipes.ErrRevoked) {
		t.Errorf("revoked holding ended with %v, want ErrRevoked", cause)
	}
	for i, c := range ctxs[2:] {
		if err := context.Cause(c); err != nil {
			t.Errorf("holding %d ended: %v", i+2, err)
		}
	}
	for _, m := range ms {
		_ = m.Unlock(ctx) // the first two say their holding had ended
	}
	waitFor(t, 10*time.Second, "the holdings' watches fired by their unlocks", func() bool { return armed() == armedBefore })
	if left := testutil.SteadyCount(count); left != before {
		t.Errorf("%d goroutines after the unlocks, want %d", left, before)
	}
}
