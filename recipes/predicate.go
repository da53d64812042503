package recipes

// A Predicate decides, from the contenders sorted in queue order and the
// index of our own node in that slice, whether we hold; when we do not, it
// returns the index of the single node to watch, which must be ahead of us
// (watch < self).
//
// Every predicate must be monotone: removing contenders ahead of self never
// turns "held" into "not held", and contenders after self never matter.
// The core relies on this: nodes ahead of us can only disappear (a newcomer
// always gets a later sequence number), so when the watched node is deleted
// the core re-evaluates the known list without it and, if that holds, holds
// without listing the parent again (see Acquire for when it lists).
//
// Predicates are called from the acquiring goroutine only, but one
// predicate value may serve many acquisitions at once: it must be pure. The
// predicates of this package are.
type Predicate func(cs []Contender, self int) (held bool, watch int)

// Exclusive holds at index 0 and otherwise watches the node right ahead:
// a mutex. A release wakes exactly the one waiter behind the holder.
func Exclusive() Predicate {
	return func(_ []Contender, self int) (bool, int) {
		if self <= 0 {
			return true, -1
		}
		return false, self - 1
	}
}

// Semaphore holds at index < n and otherwise watches the node n places
// ahead, so each release wakes at most one waiter. n < 1 is treated as 1.
// A waiter is woken only when the node it watches goes: if another holder
// releases first, the waiter holds later than it could (a liveness delay,
// never a safety issue). lock.Semaphore uses Curator's layout instead.
func Semaphore(n int) Predicate {
	n = max(n, 1)
	return func(_ []Contender, self int) (bool, int) {
		if self < n {
			return true, -1
		}
		return false, self - n
	}
}

// Read holds when no contender ahead is a writer (any role other than
// RoleRead) and otherwise watches the nearest writer ahead.
func Read() Predicate {
	return func(cs []Contender, self int) (bool, int) {
		for i := min(self, len(cs)) - 1; i >= 0; i-- {
			if cs[i].Role != RoleRead {
				return false, i
			}
		}
		return true, -1
	}
}
