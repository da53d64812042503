//go:build zkrecipes_hooks

package recipes

import (
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/internal/hooks"
)

// TestDropLeaseTerms: the test seam hooks.SetLeaseDrop removes any of Q
// (tick/2), P and R from the lag, lengthens Hold by as much, keeps the
// ping period, and with nothing set leaves the budget alone.
func TestDropLeaseTerms(t *testing.T) {
	const tick = 200 * time.Millisecond
	const r = DefaultQuorumRetransmit
	b, err := NewLeaseBudget(3*time.Second, 300*time.Millisecond, tick, 5, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q, p, r bool
		less    time.Duration
	}{
		{false, false, false, 0},
		{true, false, false, tick / 2},
		{false, true, false, b.Ping},
		{false, false, true, r},
		{true, true, false, tick/2 + b.Ping},
		{true, true, true, tick/2 + b.Ping + r},
	} {
		restore := hooks.SetLeaseDrop(c.q, c.p, c.r)
		got := dropLeaseTerms(b, tick, r)
		restore()
		if got.Lag != b.Lag-c.less || got.Hold != b.Hold+c.less || got.Ping != b.Ping || got.Timeout != b.Timeout || got.Margin != b.Margin {
			t.Errorf("drop Q %v, P %v, R %v: %+v from %+v, want the lag %v shorter", c.q, c.p, c.r, got, b, c.less)
		}
	}
	if q, p, r := hooks.LeaseDrop(); q || p || r {
		t.Fatalf("restore left Q %v, P %v, R %v dropped", q, p, r)
	}
}
