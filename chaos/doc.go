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
//     (github.com/anishathalye/porcupine), queue delivery, barriers,
//     two-phase commit, no nodes left, and liveness after a fault heals.
//   - Faults (fault*.go, schedule.go): a catalogue mapping each fault of the
//     design to testenv calls, and a seeded schedule: the same seed gives the
//     same fault windows.
//   - Scenarios (scenario.go, runner.go): a Scenario is a Workload under a
//     Fault; the Runner plays the schedule against the workload, heals the
//     ensemble, and runs the workload's checkers.
//   - Workloads (workload_*.go): a Workload drives several sessions, each
//     through its own testenv Link, and records events.
//   - Report (report*.go): index.html with a summary table and a timeline
//     per scenario, the histories as JSON, and JUnit XML for CI.
//
// cmd/zkchaos is the command-line front end.
package chaos
