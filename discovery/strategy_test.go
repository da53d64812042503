package discovery

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

func instances(ids ...string) []Instance {
	out := make([]Instance, len(ids))
	for i, id := range ids {
		out[i] = Instance{Name: "svc", ID: id}
	}
	return out
}

func TestRoundRobin(t *testing.T) {
	s := RoundRobin()
	abc := instances("a", "b", "c")
	var got []int
	for range 7 {
		got = append(got, s.Pick(abc))
	}
	if fmt.Sprint(got) != "[0 1 2 0 1 2 0]" {
		t.Fatalf("round robin picked %v", got)
	}
	// The counter runs on over a changed list, as Curator's does: the 8th
	// pick is index 7 % 2.
	if i := s.Pick(instances("a", "b")); i != 1 {
		t.Fatalf("after a change picked %d, want 1", i)
	}
	if i := s.Pick(nil); i != -1 {
		t.Fatalf("empty list picked %d", i)
	}
}

func TestRoundRobinConcurrent(t *testing.T) {
	s := RoundRobin()
	abcd := instances("a", "b", "c", "d")
	counts := make([]int, 4)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				i := s.Pick(abcd)
				mu.Lock()
				counts[i]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for i, c := range counts {
		if c != 200 {
			t.Fatalf("instance %d picked %d times of 800, want 200: %v", i, c, counts)
		}
	}
}

func TestRandom(t *testing.T) {
	s := Random()
	abc := instances("a", "b", "c")
	seen := map[int]int{}
	for range 3000 {
		i := s.Pick(abc)
		if i < 0 || i > 2 {
			t.Fatalf("picked %d", i)
		}
		seen[i]++
	}
	for i := range 3 {
		if seen[i] < 800 { // expected 1000; 800 is > 7 standard deviations away
			t.Fatalf("random picks %v: index %d too rare", seen, i)
		}
	}
	if s.Pick(nil) != -1 {
		t.Fatal("empty list picked")
	}
}

func TestSticky(t *testing.T) {
	s := Sticky(nil) // round robin master
	if i := s.Pick(instances("a", "b", "c")); i != 0 {
		t.Fatalf("first pick %d", i)
	}
	// Stays with "a" wherever it is in the list, and whatever its data.
	for _, list := range [][]Instance{instances("a", "b", "c"), instances("x", "a"), {{ID: "y"}, {ID: "a", Port: 9}}} {
		if i := s.Pick(list); list[i].ID != "a" {
			t.Fatalf("sticky moved to %s in %v", list[i].ID, list)
		}
	}
	// "a" gone: the master chooses again (its second pick: index 1), and
	// the new choice sticks.
	list := instances("b", "c", "d")
	if i := s.Pick(list); list[i].ID != "c" {
		t.Fatalf("after a left, picked %s, want c", list[i].ID)
	}
	if i := s.Pick(instances("c", "a")); i != 0 {
		t.Fatalf("did not stick to c: %d", i)
	}
	if s.Pick(nil) != -1 {
		t.Fatal("empty list picked")
	}
	// A master that chooses nothing leaves nothing chosen.
	n := Sticky(none{})
	if i := n.Pick(instances("a")); i != -1 {
		t.Fatalf("picked %d with a master that picks none", i)
	}
}

type none struct{}

func (none) Pick([]Instance) int { return 7 }

// A Provider's usable set without a server: disabled instances, filters
// and down notes (Curator's DownInstanceManager: threshold notes within
// the window of the first; usable again once the window has passed).
func TestProviderUsable(t *testing.T) {
	p := &Provider{path: "/s/api", opts: providerOptions{strategy: RoundRobin(), downWindow: 200 * time.Millisecond, downThreshold: 2,
		filters: []func(Instance) bool{func(i Instance) bool { return i.ID != "filtered" }}},
		nodes: map[string]cached{}, downs: map[string]*downNote{}}
	for _, inst := range []Instance{{ID: "b"}, {ID: "a"}, {ID: "off", Disabled: true}, {ID: "filtered"}, {ID: "c"}} {
		p.nodes[inst.ID] = cached{inst: inst}
	}
	ids := func() string {
		var s []string
		for _, i := range p.Instances() {
			s = append(s, i.ID)
		}
		return fmt.Sprint(s)
	}
	if got := ids(); got != "[a b c]" {
		t.Fatalf("usable %s, want [a b c]", got)
	}
	p.NoteError("b")
	if got := ids(); got != "[a b c]" {
		t.Fatalf("one note (threshold 2) took b out: %s", got)
	}
	p.NoteError("b")
	if got := ids(); got != "[a c]" {
		t.Fatalf("two notes left b in: %s", got)
	}
	for range 4 {
		if inst, err := p.Pick(); err != nil || inst.ID == "b" {
			t.Fatalf("Pick = %v, %v", inst.ID, err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for ids() != "[a b c]" {
		if time.Now().After(deadline) {
			t.Fatalf("b still down after its window: %s", ids())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Instances returns copies: changing them leaves the cache alone.
	all := p.Instances()
	all[0].ID = "changed"
	if got := ids(); got != "[a b c]" {
		t.Fatalf("the cache changed with a returned copy: %s", got)
	}
	p.nodes = map[string]cached{"x": {inst: Instance{ID: "x", Disabled: true}}}
	if _, err := p.Pick(); !errors.Is(err, ErrNoInstances) {
		t.Fatalf("Pick with only a disabled instance = %v", err)
	}
}
