// Package chaos drives recipes against a real ZooKeeper ensemble (package
// testenv) while injecting faults, records what every client observed, and
// proves the invariants of the design with pure checkers. This package is
// the runner and its entry points; the parts live in subpackages:
//
//   - history: the events every client records (operations as
//     invoke/completion pairs, holdings acquired, released or lost, fenced
//     writes, fault windows and their targets), the recorder, and the
//     CLOCK_MONOTONIC clock that orders the events of every process on the
//     machine; histories are saved and loaded as JSON.
//   - cluster: what a workload and the faults of one scenario share: the
//     ensemble, the recorder, and the clients, each on its own testenv
//     Link, with its session and process.
//   - faults: the catalogue mapping each fault of the design to testenv
//     calls, aimed where it matters (the holder, a waiter, the holder's
//     server, the ZooKeeper leader), each recording the target it really
//     struck; and the seeded schedule (Tier, Window, Schedule): the same
//     seed gives the same fault windows and the same roles of target.
//   - checkers: pure functions over a history, one per invariant (mutual
//     exclusion, fencing, linearizability, queue delivery, barriers,
//     two-phase commit, no nodes left, liveness, lease margins, throughput
//     before the first fault, the trace each fault left).
//   - workloads: a Workload per recipe, with the deliberately broken ones
//     and the mutants; each drives several sessions, each through its own
//     link, and records events; worker processes for the faults that stop
//     or kill a client.
//   - report: the results of a run, and the report: index.html with
//     what needs attention first and a summary table per workload, a page
//     per scenario (fault windows as injected, rate and latency, a
//     timeline), the histories as gzipped JSON, summary.json and JUnit XML
//     for CI; the progress line printed after each scenario.
//
// This package holds Config (config.go), Scenario, Matrix and Select
// (scenario.go), and the Runner (runner.go, run.go), which plays each
// scenario's schedule against its workload, heals the ensemble, checks
// that no node outlives the closed sessions (admin.go), runs the
// workload's checkers and writes the report after every scenario, so
// that a run killed meanwhile leaves valid files. Invariants: scenarios run one
// at a time; each fault is healed (links restored, a quorum serving)
// before the next one starts; a scenario's checkers run over its whole
// history, once its workload has stopped; a run stops early only when the
// ensemble cannot be healed or its context ends, never on a violation.
//
// cmd/zkchaos is the command-line front end.
package chaos
