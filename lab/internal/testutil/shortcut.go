package testutil

import (
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// ShortCut cuts link right after a renewal of s's lease, waits for s to
// be suspended, restores the link and waits for s to be connected again
// (failing tb if the session changed: the scenario needs it to survive),
// then returns the lease's deadline as it stood at the cut. Nothing is
// answered during the cut, so a reconnection seen after that deadline was
// a long cut (the lease ended every holding by design) and the caller
// should aim again; one seen before it was short. go-zookeeper's next
// connection attempt comes about a second after the refused one, so the
// session needs a lease well over a second long (an 8 s timeout gives
// 3.6 s past a renewal; the harness's 3 s only 1.04 s).
func ShortCut(tb testing.TB, link *testenv.Link, s *recipes.Session) (deadline time.Time) {
	tb.Helper()
	renewed := s.LeaseDeadline()
	WaitFor(tb, 10*time.Second, "a lease renewal", func() bool { return s.LeaseDeadline().After(renewed) })
	deadline = s.LeaseDeadline()
	sid := s.ID()
	if err := link.Cut(); err != nil {
		tb.Fatal(err)
	}
	WaitFor(tb, 10*time.Second, "suspended", func() bool { return s.State() == recipes.StateSuspended })
	if err := link.Restore(); err != nil {
		tb.Fatal(err)
	}
	WaitFor(tb, 10*time.Second, "reconnected", func() bool {
		st := s.State()
		return st == recipes.StateReconnected || st == recipes.StateConnected
	})
	if s.ID() != sid {
		tb.Fatalf("the session changed (0x%x -> 0x%x): the scenario needs it to survive", sid, s.ID())
	}
	return deadline
}
