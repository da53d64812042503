package inspect

import (
	"slices"

	"github.com/zkrecipes/zkrecipes/barrier"
	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/twophase"
)

// Kind is the recipe a path holds, as recognised from its children's names.
type Kind string

// The kinds Recognise tells apart.
const (
	KindAbsent        Kind = "absent"         // the path does not exist
	KindEmpty         Kind = "empty"          // a node without children: a set Barrier, or an idle recipe path
	KindLock          Kind = "lock"           // mutex contenders (Curator InterProcessMutex / LeaderSelector, lock.Mutex; kazoo Lock or Election)
	KindRWLock        Kind = "rwlock"         // read/write lock contenders
	KindElection      Kind = "election"       // Curator LeaderLatch participants (leader.Election's default)
	KindSemaphore     Kind = "semaphore"      // Curator InterProcessSemaphoreV2 (lock.Semaphore): "leases" and "locks"; kazoo Semaphore: "lock" and lease GUIDs
	KindDoubleBarrier Kind = "double-barrier" // members named by GUID, and "ready" once all entered
	KindQueue         Kind = "queue"          // items "qn-<seq>" / "entry-<ppp>-<seq>", claims under "taken"
	KindTwoPhase      Kind = "twophase"       // a twophase root: transactions with sites, votes and a decision
	KindUnknown       Kind = "unknown"        // children this package does not recognise
)

// Fixed child names of the layouts.
const (
	leasesChild  = "leases"  // Curator InterProcessSemaphoreV2: the leases
	locksChild   = "locks"   // Curator InterProcessSemaphoreV2: the mutex guarding the leases
	kazooSemLock = "lock"    // kazoo Semaphore: the Lock guarding the leases
	readyChild   = "ready"   // double barrier (barrier.ReadyNode)
	takenChild   = "taken"   // queue claims (queue's default claim path, kazoo LockingQueue)
	entriesChild = "entries" // kazoo LockingQueue: the items
)

// Layout is what the names of a path's children say about it. Recognise
// fills Kind, Dialect and the parsed names; the reader then fetches the
// nodes' data and stats.
//
// Invariant: Contenders are in the recipe's own queue order (the order
// its clients agree on: recipes.SortBySeq over the roles that block each
// other), Items in the order a queue.Queue consumes them, Members in the
// leave protocol's order; Foreign lists, sorted, every child the layout does
// not account for.
type Layout struct {
	Kind    Kind
	Dialect recipes.Dialect
	// Contenders: lock, rwlock, election (and, read by the reader from
	// "<path>/locks", a Curator semaphore's mutex).
	Contenders []recipes.Contender
	// Items: a queue's items (when ItemsPath is "", they are children of
	// the path itself).
	Items []queue.ItemName
	// Members: a double barrier's members, or a kazoo semaphore's leases.
	Members []string
	Ready   bool // a double barrier's "ready" node is present
	// ZooKeeper: the names are those of ZooKeeper's own lock or election
	// recipe (see zookeeper.go); Dialect is then not used.
	ZooKeeper bool
	Sub       string // the child holding the rest: "leases" (semaphore), "entries" (kazoo LockingQueue)
	Claims    bool   // a "taken" child holds a queue's claims
	Foreign   []string
}

// Recognise classifies a path from its children's names and, for the
// layouts recognised by fixed child names, the names of those children's
// own children: sub maps "leases", "locks", "lock", "entries", "taken" and
// "ready" (those of them that are children of the path) to their children;
// a name missing from sub counts as a node without children. It is given
// exists=false for an absent path only by the caller's choice: an existing
// node without children is KindEmpty.
//
// A fixed name proves nothing by itself ("/app/locks" is where an
// application keeps its locks, not a semaphore's mutex), so such a layout
// is recognised only when the names under it parse as that layout's nodes:
// a Curator semaphore has "leases", every child of "leases" parses as a
// lease and every child of "locks" as a lock contender; a kazoo semaphore's
// "lock" holds kazoo lock contenders; a kazoo LockingQueue's "entries"
// holds its items; a queue's "taken" holds claims named after items; a
// double barrier's "ready" has no children. A fixed-name layout with
// children it does not account for is recognised only when at least one
// node under its fixed names parsed (an idle "leases" beside strangers
// proves nothing).
//
// Precedence when names of several recipes are mixed: a Curator rwlock,
// election, lock; kazoo's rwlock, lock; ZooKeeper's WriteLock, election;
// a semaphore; a queue; a double barrier. A layout's foreign names are
// listed, not ignored. A twophase root needs a second level of names (see
// IsTransaction); Recognise returns KindUnknown for one. Pure.
func Recognise(exists bool, children []string, sub map[string][]string) Layout {
	if !exists {
		return Layout{Kind: KindAbsent}
	}
	if len(children) == 0 {
		return Layout{Kind: KindEmpty}
	}
	has := func(name string) bool { return slices.Contains(children, name) }
	parse := func(d recipes.Dialect, roles ...recipes.Role) []recipes.Contender {
		var cs []recipes.Contender
		for _, c := range children {
			if ct, ok := d.Parse(c, roles...); ok {
				cs = append(cs, ct)
			}
		}
		if len(cs) > 0 {
			recipes.SortBySeq(cs, cs[0].Seq)
		}
		return cs
	}
	contenders := func(kind Kind, d recipes.Dialect, cs []recipes.Contender) Layout {
		l := Layout{Kind: kind, Dialect: d, Contenders: cs}
		l.Foreign = foreign(children, func(n string) bool {
			return slices.ContainsFunc(cs, func(c recipes.Contender) bool { return c.Name == n })
		})
		return l
	}
	cur, kaz := recipes.Curator, recipes.Kazoo
	if cs := parse(cur, recipes.RoleRead, recipes.RoleWrite); len(cs) > 0 {
		return contenders(KindRWLock, cur, cs)
	}
	if cs := parse(cur, recipes.RoleLatch); len(cs) > 0 {
		return contenders(KindElection, cur, cs)
	}
	if cs := parse(cur, recipes.RoleLock); len(cs) > 0 {
		return contenders(KindLock, cur, cs)
	}
	if cs := parse(kaz, recipes.RoleLock, recipes.RoleRead); len(cs) > 0 {
		if slices.ContainsFunc(cs, func(c recipes.Contender) bool { return c.Role == recipes.RoleRead }) {
			return contenders(KindRWLock, kaz, cs)
		}
		if !has(kazooSemLock) {
			return contenders(KindLock, kaz, cs)
		}
	}
	for _, zp := range []struct {
		kind  Kind
		parse func(string) (recipes.Contender, bool)
	}{{KindLock, zkWriteLock}, {KindElection, zkElection}} {
		var cs []recipes.Contender
		for _, c := range children {
			if ct, ok := zp.parse(c); ok {
				cs = append(cs, ct)
			}
		}
		if len(cs) > 0 {
			recipes.SortBySeq(cs, cs[0].Seq)
			l := contenders(zp.kind, cur, cs)
			l.ZooKeeper = true
			return l
		}
	}
	// fixed reports whether the names under the fixed children all parse
	// (each with its own test), and how many there are.
	fixed := func(tests map[string]func(string) bool) (ok bool, nodes int) {
		for name, test := range tests {
			if !has(name) {
				continue
			}
			for _, n := range sub[name] {
				if !test(n) {
					return false, 0
				}
				nodes++
			}
		}
		return true, nodes
	}
	parses := func(d recipes.Dialect, r recipes.Role) func(string) bool {
		return func(n string) bool { _, ok := d.Parse(n, r); return ok }
	}
	items := func(d recipes.Dialect) func(string) bool {
		return func(n string) bool { return len(queue.ItemNames(d, []string{n})) == 1 }
	}
	// accept: a fixed layout with foreign children needs evidence.
	accept := func(fg []string, evidence int) bool { return len(fg) == 0 || evidence > 0 }
	if has(leasesChild) {
		ok, n := fixed(map[string]func(string) bool{leasesChild: parses(cur, recipes.RoleLease), locksChild: parses(cur, recipes.RoleLock)})
		fg := foreign(children, func(n string) bool { return n == leasesChild || n == locksChild })
		if ok && accept(fg, n) {
			return Layout{Kind: KindSemaphore, Dialect: cur, Sub: leasesChild, Foreign: fg}
		}
	}
	if has(kazooSemLock) {
		ms := barrier.Members(kaz, children)
		ok, n := fixed(map[string]func(string) bool{kazooSemLock: parses(kaz, recipes.RoleLock)})
		fg := foreign(children, func(n string) bool { return n == kazooSemLock || slices.Contains(ms, n) })
		if ok && accept(fg, n+len(ms)) {
			return Layout{Kind: KindSemaphore, Dialect: kaz, Members: ms, Foreign: fg}
		}
	}
	if has(entriesChild) {
		ok, n := fixed(map[string]func(string) bool{entriesChild: items(kaz), takenChild: items(kaz)})
		fg := foreign(children, func(n string) bool { return n == entriesChild || n == takenChild })
		if ok && accept(fg, n) {
			return Layout{Kind: KindQueue, Dialect: kaz, Sub: entriesChild, Claims: has(takenChild), Foreign: fg}
		}
	}
	for _, d := range []recipes.Dialect{cur, kaz} {
		if items := queue.ItemNames(d, children); len(items) > 0 {
			claims, _ := fixed(map[string]func(string) bool{takenChild: func(n string) bool {
				return len(queue.ItemNames(cur, []string{n}))+len(queue.ItemNames(kaz, []string{n})) > 0
			}})
			claims = claims && has(takenChild)
			return Layout{Kind: KindQueue, Dialect: d, Items: items, Claims: claims,
				Foreign: foreign(children, func(n string) bool {
					return (claims && n == takenChild) || slices.ContainsFunc(items, func(it queue.ItemName) bool { return it.Name == n })
				})}
		}
	}
	if has(takenChild) && len(children) == 1 {
		if ok, _ := fixed(map[string]func(string) bool{takenChild: func(n string) bool {
			return len(queue.ItemNames(cur, []string{n}))+len(queue.ItemNames(kaz, []string{n})) > 0
		}}); ok {
			return Layout{Kind: KindQueue, Dialect: cur, Claims: true}
		}
	}
	// ready: a leaf, when it is a barrier's.
	ready := has(readyChild) && len(sub[readyChild]) == 0
	for _, d := range []recipes.Dialect{cur, kaz} {
		if ms := barrier.Members(d, children); len(ms) > 0 {
			return Layout{Kind: KindDoubleBarrier, Dialect: d, Members: ms, Ready: ready,
				Foreign: foreign(children, func(n string) bool { return (ready && n == readyChild) || slices.Contains(ms, n) })}
		}
	}
	if ready && len(children) == 1 {
		return Layout{Kind: KindDoubleBarrier, Dialect: cur, Ready: true}
	}
	return Layout{Kind: KindUnknown, Foreign: foreign(children, func(string) bool { return false })}
}

// fixedChildren are the child names whose own children Recognise needs.
var fixedChildren = []string{leasesChild, locksChild, kazooSemLock, entriesChild, takenChild, readyChild}

// IsTransaction reports whether a node whose children are children, and
// whose grandchildren (by child name) are grand, is a twophase
// transaction: it has a "decision" child, or a site child holding "alive",
// "vote" or "done" (twophase's layout). Pure.
func IsTransaction(children []string, grand map[string][]string) bool {
	if slices.Contains(children, twophase.DecisionName) {
		return true
	}
	for _, c := range children {
		for _, g := range grand[c] {
			if g == twophase.AliveName || g == twophase.VoteName || g == twophase.DoneName {
				return true
			}
		}
	}
	return false
}

// foreign returns the names known does not accept, sorted.
func foreign(children []string, known func(string) bool) []string {
	var out []string
	for _, c := range children {
		if !known(c) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}
