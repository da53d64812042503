package recipes

import "slices"

// A Predicate decides, from the contenders sorted in queue order and the
// index of our own node in that slice, whether we hold; when we do not, it
// returns the index of the single node to watch, which must be ahead of us
// (watch < self).
//
// Every predicate must be monotone: removing contenders ahead of self never
// turns "held" into "not held", and contenders after self never matter.
// The core relies on this: when the watched node is deleted, it
// re-evaluates the known list without it; if that does not hold, it watches
// the next node the predicate names. If it holds, the core holds without
// listing the parent again only when no node can have appeared ahead of us
// meanwhile; otherwise it lists first (see Acquire).
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

// FirstN (a semaphore of n) holds at index < n and otherwise watches the
// node n places ahead, so each release wakes at most one waiter. n < 1 is
// treated as 1.
// A waiter is woken only when the node it watches goes: if another holder
// releases first, the waiter holds later than it could (a liveness delay,
// never a safety issue). lock.Semaphore uses Curator's layout instead.
func FirstN(n int) Predicate {
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

// unsequencedRoles lists, per dialect (by name), the roles whose nodes some
// client of that dialect creates without a sequence number of its own, so
// that such a node can sort ahead of contenders already queued. Curator
// 5.5+ (CURATOR-621): a write holder that downgrades creates a plain
// EPHEMERAL read node "_c_<uuid36>-__READ__<its write node's sequence>" and
// then deletes its write node; the read node takes the write node's place,
// ahead of every writer queued behind it. kazoo and this package create
// sequential nodes only.
var unsequencedRoles = map[string][]Role{
	Curator.String(): {RoleRead},
}

// trustsKnownList reports whether a waiter of spec may conclude that it
// holds from cs, the list it got from its last getChildren minus the nodes
// it has since seen deleted, without listing again.
//
// That is safe when no node can have appeared ahead of us since the
// listing. A node created as sequential gets a later sequence number than
// ours (ZooKeeper's counter only grows), so it sorts after us: roles whose
// blocking roles are only ever created as sequential nodes (mutex, leader
// latch, semaphore; kazoo's read and write locks) may trust the list. A
// role ordered against a role of unsequencedRoles may not, unless the
// predicate ignores such nodes wherever they sit: the probe puts one in
// front of every node still ahead of us and in front of us, and asks the
// predicate again. One per place is enough: a Curator writer downgrades
// only while it holds, and no writer holds while such a read node is ahead
// of it, so at most one exists at a time; a monotone predicate that holds
// with one in every place holds with one in any place. Read() ignores readers, so a reader in a Curator rw lock
// keeps the shortcut; Exclusive() does not, so a Curator writer lists again
// (1 getChildren) before it concludes that it holds. Pure.
func trustsKnownList(spec *Spec, cs []Contender, self int) bool {
	blocking := spec.Dialect.Blocking(spec.Role)
	for _, r := range unsequencedRoles[spec.Dialect.String()] {
		if !slices.Contains(blocking, r) {
			continue
		}
		probe := make([]Contender, 0, 2*self+2)
		for _, c := range cs[:self] {
			probe = append(probe, Contender{Role: r}, c)
		}
		probe = append(probe, Contender{Role: r}, cs[self])
		if held, _ := spec.Predicate(probe, len(probe)-1); !held {
			return false
		}
	}
	return true
}
