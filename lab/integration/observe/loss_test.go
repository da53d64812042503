package observe_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestLeaseAndLoss: with the connection cut under a held lock
// (StepDownOnLost, so only the lease can end it before the session is
// lost), the observer sees the lease renewed while replies flow (lease
// left between 0 and the timeout), the suspension, the lease running out
// (lease left <= 0), the holding ended with cause ErrLeaseExpired, and the
// session lost; after the link is restored, the session usable again. The
// observer reads the Session in every callback (none is made under the
// Session's lock).
func TestLeaseAndLoss(t *testing.T) {
	e := ensemble(t)
	link, err := e.NewLink("observe-loss")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	r := &recorder{}
	p := &probing{recorder: r}
	s := connect(t, link.Addrs(), recipes.WithObserver(p), recipes.WithLossPolicy(recipes.StepDownOnLost))
	p.s.Store(s)
	m, err := lock.New(s, testPath(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	sid := s.ID()
	waitFor(t, 10*time.Second, "a lease renewal", func() bool { _, _, _, l := r.snapshot(); return len(l) > 0 })
	_, _, _, leases := r.snapshot()
	for _, l := range leases {
		if l.Expired || l.SessionID != sid || l.Remaining <= 0 || l.Remaining > l.Timeout ||
			l.Timeout != s.NegotiatedTimeout() || l.Margin != recipes.DefaultLeaseMargin(l.Timeout) {
			t.Errorf("renewal %+v: want lease left in (0, %v], session 0x%x, default margin", l, s.NegotiatedTimeout(), sid)
		}
	}

	if err := link.Cut(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "suspended", func() bool { return r.sawState(recipes.StateSuspended) })
	waitFor(t, 10*time.Second, "the lease expired", func() bool {
		_, _, _, l := r.snapshot()
		return len(l) > 0 && l[len(l)-1].Expired
	})
	waitFor(t, 10*time.Second, "the holding ended", func() bool { return len(r.holdingsOf("lock")) == 2 })
	waitFor(t, 10*time.Second, "lost", func() bool { return r.sawState(recipes.StateLost) })
	_, _, _, leases = r.snapshot()
	if x := leases[len(leases)-1]; x.Remaining > 0 || x.SessionID != sid {
		t.Errorf("expiry %+v: want lease left <= 0 in session 0x%x", x, sid)
	}
	if h := r.holdingsOf("lock")[1]; !h.Lost() || h.End() != "lease_expired" || !errors.Is(h.Cause, recipes.ErrLeaseExpired) || h.SessionID != sid {
		t.Errorf("end %+v (End %q): want lost with ErrLeaseExpired in session 0x%x", h, h.End(), sid)
	}
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "usable again", func() bool {
		st := s.State()
		return st == recipes.StateConnected || st == recipes.StateReconnected
	})
	if err := m.Unlock(ctx); !errors.Is(err, recipes.ErrReleased) {
		t.Errorf("Unlock after the loss = %v, want ErrReleased", err)
	}
	_, _, states, _ := r.snapshot()
	t.Logf("states seen: %v; the observer read the Session %d times", states, p.reads.Load())
	if p.reads.Load() == 0 {
		t.Error("the observer never read the Session")
	}
	if len(states) < 3 || states[0].State != recipes.StateConnected {
		t.Errorf("states %v: want connected first, then suspended and lost", states)
	}
}

// probing is a recorder whose every callback also reads the Session (its
// state, id and lease deadline, each under the Session's lock): were a
// callback made with that lock held, it would deadlock.
type probing struct {
	*recorder
	s     atomic.Pointer[recipes.Session]
	reads atomic.Int64
}

func (p *probing) read() {
	if s := p.s.Load(); s != nil {
		_, _, _ = s.State(), s.ID(), s.LeaseDeadline()
		p.reads.Add(1)
	}
}

func (p *probing) ObserveCall(e recipes.CallEvent)       { p.read(); p.recorder.ObserveCall(e) }
func (p *probing) ObserveHolding(e recipes.HoldingEvent) { p.read(); p.recorder.ObserveHolding(e) }
func (p *probing) ObserveState(e recipes.StateChange)    { p.read(); p.recorder.ObserveState(e) }
func (p *probing) ObserveLease(e recipes.LeaseEvent)     { p.read(); p.recorder.ObserveLease(e) }
