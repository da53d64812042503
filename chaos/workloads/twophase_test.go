package workloads

import (
	"slices"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/history"
)

func TestQuiet(t *testing.T) {
	grace := 10 * time.Millisecond
	for _, tt := range []struct {
		name string
		h    history.History
		now  int64
		want bool
	}{
		{"no fault yet", newHB(100).build(), 5 * ms, true},
		{"a fault is open", newHB(100).add(history.Event{Time: 10 * ms, Client: history.Nemesis, Kind: history.KindFaultStart, Key: "cut"}).build(), 20 * ms, false},
		{"healed within the grace", newHB(100).fault("cut", 10, 20).build(), 25 * ms, false},
		{"healed longer ago than the grace", newHB(100).fault("cut", 10, 20).build(), 31 * ms, true},
		{"one of two faults still open", newHB(100).fault("cut", 10, 20).
			add(history.Event{Time: 15 * ms, Client: history.Nemesis, Kind: history.KindFaultStart, Key: "slow"}).build(), 50 * ms, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := quiet(tt.h, tt.now, grace); got != tt.want {
				t.Fatalf("quiet = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestCrashPlan: the plan depends only on the seed, crashes the
// coordinator at both of its points and one site at both of its points,
// in increasing order, and names a site.
func TestCrashPlan(t *testing.T) {
	for _, tt := range []struct {
		root  string
		sites int
	}{
		{"/chaos/twophase-kill-leader-1", 3},
		{"/chaos/twophase-half-open-2", 3},
		{"/chaos/twophase-pause-server-3", 1},
		{"", 0},
	} {
		co, site, sc := crashPlan(seedOf(tt.root), tt.sites)
		co2, site2, sc2 := crashPlan(seedOf(tt.root), tt.sites)
		if !slices.Equal(co, co2) || site != site2 || !slices.Equal(sc, sc2) {
			t.Fatalf("%s: two draws differ: %v %d %v, then %v %d %v", tt.root, co, site, sc, co2, site2, sc2)
		}
		if site < 1 || site > max(tt.sites, 1) {
			t.Fatalf("%s: site %d of %d", tt.root, site, tt.sites)
		}
		for _, p := range []struct {
			plan []crashAt
			a, b string
		}{{co, history.CrashAfterBegin, history.CrashAfterDecide}, {sc, history.CrashBeforeVote, history.CrashAfterVote}} {
			if len(p.plan) != 2 || p.plan[0].n < 1 || p.plan[1].n <= p.plan[0].n ||
				!(p.plan[0].where == p.a && p.plan[1].where == p.b || p.plan[0].where == p.b && p.plan[1].where == p.a) {
				t.Fatalf("%s: plan %v, want %s and %s at increasing points", tt.root, p.plan, p.a, p.b)
			}
		}
	}
}
