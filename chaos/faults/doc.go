// Package faults is the chaos suite's fault catalogue and its seeded
// schedule.
//
// What it holds:
//
//   - Fault and the catalogue (fault.go, inject.go): each fault of the
//     design mapped onto testenv calls (client links through Toxiproxy,
//     servers through the container engine, worker processes through
//     signals), with the function that heals it. Catalogue lists them,
//     ByName finds one.
//   - Aiming (target.go): a fault strikes where it matters (the holder, a
//     waiter, the holder's server, the ZooKeeper leader) and records the
//     Target it really struck (a history.KindFaultTarget event); Targets
//     reads them back from a history.
//   - Trace (trace.go): the mark each fault must leave in the history, or
//     the scenario tested nothing (checkers.Exercised proves it).
//   - Tier, Window and Schedule (schedule.go): the seeded list of fault
//     windows of one scenario.
//
// Invariants: the same seed, scenario name, faults, tier, duration and
// session timeout give the same schedule, whatever other scenarios run,
// and the same window picks the same role of target (which client holds
// then is up to the run); a fault on client links acts on the links of
// the scenario's clients only, never on the ensemble's default link; Inject
// reports the target the fault really struck; a server fault's heal
// returns once a quorum serves again. The package imports history and
// cluster, nothing else of the chaos suite.
package faults
