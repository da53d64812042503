// Package chaos drives recipes against a real ZooKeeper ensemble (package
// testenv) while injecting faults, records what every client observed, and
// proves the invariants of the design with pure checkers.
//
// The pieces, one concern per file:
//
//   - History (history.go, recorder.go, clock_*.go): every client records
//     events (operations as invoke/completion pairs, holdings acquired,
//     released or lost, fenced writes accepted or rejected, fault windows)
//     stamped with CLOCK_MONOTONIC nanoseconds, one clock for every process
//     on the machine, so worker subprocesses' events merge into one history.
//     Histories are saved and loaded as JSON.
//   - Checkers (check*.go): pure functions over a History, one per
//     invariant: mutual exclusion (n holders, writer exclusive, at most one
//     leader), fencing order, linearizability of registers and queues
//     (github.com/anishathalye/porcupine; a search that times out fails),
//     queue delivery (consumed means acked, one live claim per item),
//     barriers, two-phase commit against what is read back from ZooKeeper,
//     no nodes left (ephemeral and each recipe's persistent litter),
//     liveness of every client after a fault heals, the lease margin of
//     every handoff after a loss (the old holder's loss signal strictly
//     before the new holder's acquisition), the throughput before the first
//     fault (a scenario that barely ran is "not exercised") and the trace
//     each fault left (a fault that left none is "not exercised" too).
//   - Faults (fault*.go, target.go, schedule.go): a catalogue mapping each
//     fault of the design to testenv calls, aimed where it matters (the
//     holder, a waiter, the holder's server, the ZooKeeper leader), each
//     recording the target it really struck; and a seeded schedule: the same
//     seed gives the same fault windows and the same roles of target.
//   - Scenarios (scenario.go, runner.go): a Scenario is a Workload under a
//     Fault; the Runner plays the schedule against the workload, heals the
//     ensemble, and runs the workload's checkers.
//   - Workloads (workload_*.go): a Workload drives several sessions, each
//     through its own testenv Link, and records events.
//   - Report (report*.go, summary.go): index.html with a summary table per
//     workload and a timeline per scenario, the histories as JSON, and
//     JUnit XML for CI with each case's real time.
//
// cmd/zkchaos is the command-line front end.
package chaos
