// Package cluster is what the workload and the faults of one scenario
// share: the ensemble under test, the scenario's recorder, and the clients
// the workload made, each on its own testenv Link, with its session and,
// for a workload run in worker processes, its process.
//
// What it holds:
//
//   - Env and Client (env.go): a workload makes its clients with
//     Env.NewClient and connects them with Env.Connect (or through
//     recipes.Session with Client.Dial and Client.SetConn); the faults act
//     on their links, sessions, servers and processes. Client.Dial records
//     every reconnection as a KindSession event.
//   - SampleSessions (sample.go): the runner's 20 ms sampling of every
//     client's session (suspended, connected, new id).
//   - Ephemerals (nodes.go): the ephemeral nodes under a path, for the
//     checks of nodes left behind.
//   - The worker processes the kill-client fault killed (killed.go), so
//     that their workload starts new ones and records the loss of what a
//     dead process held.
//
// Invariants: Env and Client are safe for concurrent use; every client has
// a link of its own, so a fault on one client's link touches no other
// client; a client's session id is the one its connection has now (or the
// last one a worker process reported). The package imports history and
// testenv, nothing else of the chaos suite.
package cluster
