// Package checkers proves the invariants of the design over a recorded
// history (package history), one Checker per invariant.
//
// What it holds, one concern per file:
//
//   - Checker, Result and Violation (checker.go).
//   - Mutual exclusion: at most n holders, a writer exclusive, at most one
//     leader, tokens that grow (exclusion.go); fencing order (fencing.go);
//     the lease margin of every handoff after a loss (margin.go); a
//     semaphore whose maximum changes never above the maximum in force
//     (semaphore.go).
//   - Linearizability of registers and queues, searched with
//     github.com/anishathalye/porcupine (register.go, queue.go; a search
//     that times out is a violation: nothing was proven), session-ordered
//     reads (reads.go), queue delivery (queue.go: consumed means acked, one
//     live claim per item).
//   - Barriers (barrier.go) and two-phase commit against what the workload
//     read back from ZooKeeper (twophase.go).
//   - No nodes left (nodes.go), liveness of every client after a fault
//     heals (liveness.go), the throughput before the first fault
//     (throughput.go: a scenario that barely ran is "not exercised") and
//     the trace each fault left (exercised.go: a fault that left none is
//     "not exercised" too).
//
// Invariants: a Check reads nothing but its history (no I/O, no state
// between calls), so the same history gives the same result, except that a
// linearizability search is bounded by its timeout; Checker.Run names the
// result and times the check. Every checker has a case that must fail and
// one that must pass in its tests. A checker lists at most 50 violations
// and counts the rest. The package imports history, faults (for the
// catalogue's traces, the targets and the tier) and recipes (for the text
// of an error a loss may carry), and calls nothing that acts on an
// ensemble.
package checkers
