package discovery

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// Strategy chooses one instance among a Provider's usable instances
// (Curator's ProviderStrategy). Pick is given the instances sorted by node
// name, never an empty slice, and returns the index of the one to use (an
// index out of range counts as none). A Strategy keeps its own state
// (a position, a choice); its Pick must be safe for concurrent use. Give
// each Provider its own Strategy value.
type Strategy interface {
	Pick(instances []Instance) int
}

// RoundRobin returns Curator's RoundRobinStrategy: the n-th Pick returns
// instances[n % len(instances)], n counting from 0 over the Strategy's
// life (so a change of the list shifts the rotation, as in Curator). The
// Provider's default.
func RoundRobin() Strategy { return &roundRobin{} }

type roundRobin struct{ n atomic.Uint64 }

func (r *roundRobin) Pick(instances []Instance) int {
	if len(instances) == 0 {
		return -1
	}
	return int((r.n.Add(1) - 1) % uint64(len(instances)))
}

// Random returns Curator's RandomStrategy: a uniformly random instance at
// every Pick.
func Random() Strategy { return random{} }

type random struct{}

func (random) Pick(instances []Instance) int {
	if len(instances) == 0 {
		return -1
	}
	return rand.IntN(len(instances))
}

// Sticky returns Curator's StickyStrategy: the first Pick chooses with
// master (RoundRobin when nil) and every later Pick returns that instance
// for as long as it is among the usable instances; once it is not (it is
// gone, disabled, filtered out or noted down), master chooses again.
// Unlike Curator, which compares whole instances, the choice is kept by
// id, so an update of the chosen instance's data does not move it.
func Sticky(master Strategy) Strategy {
	if master == nil {
		master = RoundRobin()
	}
	return &sticky{master: master}
}

type sticky struct {
	master Strategy
	mu     sync.Mutex
	id     string
	chosen bool
}

func (s *sticky) Pick(instances []Instance) int {
	if len(instances) == 0 {
		return -1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.chosen {
		for i, inst := range instances {
			if inst.ID == s.id {
				return i
			}
		}
	}
	i := s.master.Pick(instances)
	if i < 0 || i >= len(instances) {
		s.chosen = false
		return -1
	}
	s.id, s.chosen = instances[i].ID, true
	return i
}
