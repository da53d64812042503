package checkers

import (
	"reflect"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/history"
)

func TestLeaseMargin(t *testing.T) {
	tests := []struct {
		name    string
		h       history.History
		margins []time.Duration
		bad     int
	}{
		{"lost, then another acquires later", newHB(9000).hold("c1", "/l", 1, 0, -1).lost("c1", "/l", 1, 1000).
			hold("c2", "/l", 2, 1300, 2000).build(), []time.Duration{300 * time.Millisecond}, 0},
		{"acquired before the old holder's loss signal", newHB(9000).hold("c1", "/l", 1, 0, -1).hold("c2", "/l", 2, 900, 2000).
			lost("c1", "/l", 1, 1000).build(), []time.Duration{-100 * time.Millisecond}, 1},
		{"acquired at the very instant", newHB(9000).hold("c1", "/l", 1, 0, -1).lost("c1", "/l", 1, 1000).
			hold("c2", "/l", 2, 1000, 2000).build(), []time.Duration{0}, 1},
		{"released holdings have no margin", newHB(9000).hold("c1", "/l", 1, 0, 1000).hold("c2", "/l", 2, 1000, 2000).build(), nil, 0},
		{"the loser acquiring again is no handoff", newHB(9000).hold("c1", "/l", 1, 0, -1).lost("c1", "/l", 1, 1000).
			hold("c1", "/l", 3, 1200, 1500).hold("c2", "/l", 4, 1600, 2000).build(), []time.Duration{600 * time.Millisecond}, 0},
		{"readers overlap a lost reader", newHB(9000).holdMode("c1", "/rw", "read", 1, 0, -1).holdMode("c2", "/rw", "read", 2, 500, 700).
			lost("c1", "/rw", 1, 1000).holdMode("c3", "/rw", "write", 3, 1100, 1200).build(), []time.Duration{100 * time.Millisecond}, 0},
		{"another key is no handoff", newHB(9000).hold("c1", "/a", 1, 0, -1).lost("c1", "/a", 1, 1000).hold("c2", "/b", 2, 500, 600).build(), nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []time.Duration
			for _, m := range LeaseMargins(tt.h) {
				got = append(got, m.Margin)
			}
			if !reflect.DeepEqual(got, tt.margins) {
				t.Fatalf("margins %v, want %v", got, tt.margins)
			}
			r := LeaseMargin().Run(tt.h)
			if len(r.Violations) != tt.bad || r.Checked != len(tt.margins) {
				t.Fatalf("violations %+v, checked %d; want %d, %d", r.Violations, r.Checked, tt.bad, len(tt.margins))
			}
		})
	}
}

func TestMarginStats(t *testing.T) {
	ms := func(ds ...time.Duration) []Margin {
		var out []Margin
		for _, d := range ds {
			out = append(out, Margin{Margin: d})
		}
		return out
	}
	tests := []struct {
		in       []Margin
		n        int
		min, med time.Duration
	}{
		{nil, 0, 0, 0},
		{ms(5), 1, 5, 5},
		{ms(9, 1, 5), 3, 1, 5},
		{ms(4, -2, 8, 6), 4, -2, 6},
	}
	for _, tt := range tests {
		n, lo, med := MarginStats(tt.in)
		if n != tt.n || lo != tt.min || med != tt.med {
			t.Errorf("MarginStats(%v) = %d %v %v, want %d %v %v", tt.in, n, lo, med, tt.n, tt.min, tt.med)
		}
	}
}
