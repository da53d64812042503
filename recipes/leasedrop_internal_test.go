//go:build zkrecipes_hooks

package recipes

import (
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/internal/hooks"
)

// TestDropLeaseTerms: the test seam hooks.SetLeaseDrop removes Q
// (tick/2) and, or, P from the lag, lengthens Hold by as much, keeps the
// ping period, and with nothing set leaves the budget alone.
func TestDropLeaseTerms(t *testing.T) {
	const tick = 200 * time.Millisecond
	b, err := NewLeaseBudget(3*time.Second, 300*time.Millisecond, tick, 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q, p bool
		less time.Duration
	}{
		{false, false, 0},
		{true, false, tick / 2},
		{false, true, b.Ping},
		{true, true, tick/2 + b.Ping},
	} {
		restore := hooks.SetLeaseDrop(c.q, c.p)
		got := dropLeaseTerms(b, tick)
		restore()
		if got.Lag != b.Lag-c.less || got.Hold != b.Hold+c.less || got.Ping != b.Ping || got.Timeout != b.Timeout || got.Margin != b.Margin {
			t.Errorf("drop Q %v, P %v: %+v from %+v, want the lag %v shorter", c.q, c.p, got, b, c.less)
		}
	}
	if q, p := hooks.LeaseDrop(); q || p {
		t.Fatalf("restore left Q %v, P %v dropped", q, p)
	}
}
