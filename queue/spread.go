package queue

import "math/rand/v2"

// With WithSpread, consumers spread over the head of the queue when they
// collide.
//
// Every consumer lists the same items in the same order. Taking them all
// from the head, several consumers race for each item: each item then
// costs a getData or delete per loser (7 requests per item with 4
// consumers, where 2 is the floor). A consumer that lost an item to
// another one therefore lists again and moves to a lane: it takes its next
// items in order from a random position among the first width items of
// its listing, width doubling with each loss (up to maxSpread) and halving
// after spreadDecay items won in a row. Consumers in different lanes walk
// forward side by side and meet only when one reaches the items another
// took, about once per width/consumers items. A consumer alone never
// loses, so it takes strictly in order from the head.
//
// How far from FIFO: an item is taken ahead of at most maxSpread-1 older
// items of the consumer's listing, all of its priority (a priority queue's
// order across priorities is kept), and only while consumers collide. An
// item found at the head of two listings in a row by one consumer is
// taken first (the lanes pass over the head), so a passed-over item waits
// at most about two listings of each consumer. Under contention a consumer
// may therefore see one producer's items out of order, and takes are not
// linearizable as a FIFO queue: hence an option, not the default.
// Items are the same nodes as Curator's and kazoo's queues: which item a
// consumer tries first changes nothing on the wire.
const (
	maxSpread   = 64
	spreadDecay = 16
)

// spread is one Queue's lane; guarded by Queue.mu.
type spread struct {
	width int // the window the lane was drawn from; 0 or 1: the head
	lane  int // index in the cache to take next, < max(width, 1)
	won   int // items won since the last change
}

// pick returns the index in a cache of length n (n > 0) to take next.
func (s *spread) pick(n int) int { return min(s.lane, n-1) }

// lost records an item taken by another consumer first: a wider window
// and a new lane.
func (s *spread) lost() {
	s.width = min(max(s.width, 1)*2, maxSpread)
	s.lane = rand.IntN(s.width)
	s.won = 0
}

// gotOne records an item taken.
func (s *spread) gotOne() {
	if s.width <= 1 {
		return
	}
	if s.won++; s.won >= spreadDecay {
		s.width, s.won = s.width/2, 0
		s.lane = min(s.lane, max(s.width, 1)-1)
	}
}
