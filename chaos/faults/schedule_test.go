package faults

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestScheduleSeeded(t *testing.T) {
	st := 3 * time.Second
	all := Catalogue()
	kill, _ := ByName("kill-leader")
	tests := []struct {
		name     string
		scenario string
		faults   []Fault
		tier     Tier
		duration time.Duration
		windows  int // -1: at least one
	}{
		{"quick, one fault", "register/kill-leader", []Fault{kill}, TierQuick, 10 * time.Second, 1},
		{"quick, every fault", "register/all", all, TierQuick, 10 * time.Second, len(all)},
		{"full, one fault repeated", "register/kill-leader", []Fault{kill}, TierFull, time.Minute, -1},
		{"full, mixed", "register/mixed", all, TierFull, 2 * time.Minute, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := NewSchedule(42, tt.scenario, tt.faults, tt.tier, tt.duration, st)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := NewSchedule(42, tt.scenario, tt.faults, tt.tier, tt.duration, st)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("same seed, different schedules:\n%+v\n%+v", a, b)
			}
			c, _ := NewSchedule(43, tt.scenario, tt.faults, tt.tier, tt.duration, st)
			if reflect.DeepEqual(a.Windows, c.Windows) {
				t.Fatalf("seeds 42 and 43 gave the same schedule %+v", a.Windows)
			}
			if tt.windows >= 0 && len(a.Windows) != tt.windows {
				t.Fatalf("%d windows, want %d", len(a.Windows), tt.windows)
			}
			if len(a.Windows) == 0 {
				t.Fatal("no windows")
			}
			var end time.Duration
			for i, w := range a.Windows {
				f, err := ByName(w.Fault)
				if err != nil {
					t.Fatal(err)
				}
				if w.At < end {
					t.Fatalf("window %d starts at %v, before the previous one ended at %v", i, w.At, end)
				}
				lo, hi := time.Duration(f.MinFor*float64(st)), time.Duration(f.MaxFor*float64(st))
				if w.For < lo-time.Millisecond || w.For > hi+time.Millisecond {
					t.Fatalf("window %d of %s lasts %v, outside [%v, %v]", i, w.Fault, w.For, lo, hi)
				}
				end = w.At + w.For
			}
			if tt.tier == TierFull && a.Windows[len(a.Windows)-1].At >= tt.duration {
				t.Fatalf("last window starts at %v, past the duration %v", a.Windows[len(a.Windows)-1].At, tt.duration)
			}
		})
	}
}

func TestScheduleIndependentOfOtherScenarios(t *testing.T) {
	kill, _ := ByName("kill-leader")
	a, _ := NewSchedule(7, "register/kill-leader", []Fault{kill}, TierQuick, time.Second, time.Second)
	b, _ := NewSchedule(7, "lock/kill-leader", []Fault{kill}, TierQuick, time.Second, time.Second)
	if reflect.DeepEqual(a.Windows, b.Windows) {
		t.Fatal("two scenarios drew the same windows from one seed")
	}
}

func TestScheduleErrors(t *testing.T) {
	kill, _ := ByName("kill-leader")
	for _, tc := range []struct {
		faults []Fault
		tier   Tier
		st     time.Duration
	}{{nil, TierQuick, time.Second}, {[]Fault{kill}, "huge", time.Second}, {[]Fault{kill}, TierQuick, 0}} {
		if _, err := NewSchedule(1, "x", tc.faults, tc.tier, time.Second, tc.st); !errors.Is(err, ErrSchedule) {
			t.Errorf("%+v: err %v, want ErrSchedule", tc, err)
		}
	}
	if _, err := ByName("nope"); !errors.Is(err, ErrUnknownFault) {
		t.Errorf("ByName(nope): %v", err)
	}
}

func TestCatalogueCoversTheDesign(t *testing.T) {
	want := []string{"bandwidth", "cut-after-frame", "cut-short", "freeze-client", "freeze-client@waiter", "half-open", "half-open@waiter",
		"isolate-holder-follower", "isolate-holder-follower-in", "isolate-holder-follower-out", "isolate-holder-leader", "isolate-leader", "kill-all", "kill-client", "kill-follower", "kill-leader", "latency-low", "latency-near", "limit-data",
		"lose-quorum", "overlap", "partition-expire", "partition-expire@waiter", "partition-majority", "partition-minority",
		"pause-server", "slicer", "slow-close"}
	var got []string
	for _, f := range Catalogue() {
		got = append(got, f.Name)
		if f.Doc == "" || f.inject == nil || f.MaxFor < f.MinFor || f.Trace == "" {
			t.Errorf("fault %s is incomplete", f.Name)
		}
		if strings.HasSuffix(f.Name, "@waiter") != (f.Aim == RoleWaiter) {
			t.Errorf("fault %s aims at %q: only @waiter variants aim at waiters", f.Name, f.Aim)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("catalogue %v, want %v", got, want)
	}
	cut, _ := ByName("cut-short")
	if cut.MaxFor >= 1.0/3 {
		t.Errorf("cut-short may last %v session timeouts, not less than 1/3", cut.MaxFor)
	}
}
