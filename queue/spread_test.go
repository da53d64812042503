package queue

import "testing"

// TestSpread: a consumer that never loses takes in order; each loss
// doubles the window up to maxSpread and draws a lane in it, spreadDecay
// wins in a row halve it (the lane kept inside); picks stay in the lane
// and within the cache.
func TestSpread(t *testing.T) {
	var s spread
	for range 100 {
		if i := s.pick(50); i != 0 {
			t.Fatalf("no loss yet: picked %d, want 0", i)
		}
		s.gotOne()
	}
	widths := []int{2, 4, 8, 16, 32, 64, 64}
	for _, want := range widths {
		s.lost()
		if s.width != want {
			t.Fatalf("after a loss: width %d, want %d", s.width, want)
		}
	}
	lanes := map[int]bool{}
	for range 2000 {
		s.lost()
		if s.width != maxSpread {
			t.Fatalf("width %d after losses, want %d", s.width, maxSpread)
		}
		i := s.pick(500)
		if i < 0 || i >= maxSpread || i != s.pick(500) {
			t.Fatalf("lane %d outside the window of %d, or not kept", i, maxSpread)
		}
		lanes[i] = true
		if j := s.pick(3); j < 0 || j >= 3 {
			t.Fatalf("pick %d outside a cache of 3", j)
		}
	}
	if len(lanes) != maxSpread {
		t.Errorf("lanes covered %d of the %d window positions", len(lanes), maxSpread)
	}
	for _, want := range []int{32, 16, 8, 4, 2, 1} {
		for range spreadDecay {
			s.gotOne()
		}
		if s.width != want || s.lane >= max(want, 1) {
			t.Fatalf("after %d wins: width %d lane %d, want width %d", spreadDecay, s.width, s.lane, want)
		}
	}
	if i := s.pick(50); i != 0 {
		t.Fatalf("window back to 1: picked %d", i)
	}
}

// TestTakeCachedKeepsPriority: the window never reaches an item of
// another priority than the head's.
func TestTakeCachedKeepsPriority(t *testing.T) {
	q := &Queue{}
	q.spread.width, q.spread.lane = maxSpread, maxSpread-1
	for range 200 {
		q.cache = []entry{{name: "a", priority: 1}, {name: "b", priority: 1}, {name: "c", priority: 2}, {name: "d", priority: 2}}
		if e := q.takeCached(); e.priority != 1 {
			t.Fatalf("took %s of priority %d before the head's priority 1", e.name, e.priority)
		}
		if len(q.cache) != 3 {
			t.Fatalf("cache of %d after a take, want 3", len(q.cache))
		}
	}
}
