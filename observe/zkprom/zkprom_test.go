package zkprom

import (
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestNewRefusals: no registerer; a registry that already has one of the
// names refuses, and nothing of the refused Observer stays registered.
func TestNewRefusals(t *testing.T) {
	if _, err := New(nil); !errors.Is(err, ErrNilRegisterer) {
		t.Errorf("New(nil) = %v, want ErrNilRegisterer", err)
	}
	reg := prometheus.NewRegistry()
	taken := prometheus.NewCounter(prometheus.CounterOpts{Name: "zookeeper_lease_expirations_total", Help: "taken"})
	reg.MustRegister(taken)
	if _, err := New(reg); !errors.Is(err, ErrRegister) {
		t.Fatalf("New on a registry with a name taken = %v, want ErrRegister", err)
	}
	taken.Inc()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(fams) != 1 || fams[0].GetName() != "zookeeper_lease_expirations_total" {
		t.Errorf("registered after the refusal: %d families (first %q), want only the one that was there", len(fams), fams[0].GetName())
	}
	if _, err := New(prometheus.NewRegistry()); err != nil {
		t.Errorf("New on an empty registry = %v", err)
	}
}

// TestEvents: each kind of event moves its metrics; the active gauge goes
// up at an acquisition and down at its end.
func TestEvents(t *testing.T) {
	reg := prometheus.NewRegistry()
	o, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	o.ObserveCall(recipes.CallEvent{Op: "create", Duration: time.Millisecond})
	o.ObserveHolding(recipes.HoldingEvent{Phase: recipes.HoldingAcquired, Kind: "lock", Waited: time.Second})
	o.ObserveHolding(recipes.HoldingEvent{Phase: recipes.HoldingAcquired, Kind: "lock"})
	o.ObserveHolding(recipes.HoldingEvent{Phase: recipes.HoldingEnded, Kind: "lock", Cause: recipes.ErrSuspended})
	o.ObserveState(recipes.StateChange{State: recipes.StateSuspended})
	o.ObserveLease(recipes.LeaseEvent{Remaining: time.Second})
	o.ObserveLease(recipes.LeaseEvent{Expired: true})
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := make(map[string]float64)
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			v := m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
			key := f.GetName()
			for _, l := range m.GetLabel() {
				key += "," + l.GetName() + "=" + l.GetValue()
			}
			got[key] = v
		}
	}
	for k, v := range map[string]float64{
		"zookeeper_calls_total,op=create,outcome=ok":             1,
		"zookeeper_call_duration_seconds,op=create":              1,
		"zookeeper_holdings_acquired_total,kind=lock":            2,
		"zookeeper_holding_wait_seconds,kind=lock":               2,
		"zookeeper_holdings_ended_total,end=suspended,kind=lock": 1,
		"zookeeper_holding_held_seconds,end=suspended,kind=lock": 1,
		"zookeeper_holdings_active,kind=lock":                    1,
		"zookeeper_session_state_changes_total,state=suspended":  1,
		"zookeeper_lease_remaining_seconds":                      1,
		"zookeeper_lease_expirations_total":                      1,
	} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if len(got) != 10 {
		t.Errorf("%d series, want 10: %v", len(got), got)
	}
}
