// Package workloads drives the recipes (and raw ZooKeeper) with several
// clients under the chaos suite's faults and records what each client
// observes (package history).
//
// What it holds:
//
//   - Workload, ProcessWorkload, QuickFaulter, SlowStarter, Paced and
//     CheckConfig (workload.go): what the runner asks of a workload: run its
//     clients until its context ends, name the checkers that prove its
//     invariants, and say what exercises it when a rate cannot.
//   - A workload per recipe: register (raw go-zookeeper compare-and-set),
//     lock, lock-proc (the lock with every client in a worker process),
//     leader, rwlock, semaphore, semaphore-max (a count-based semaphore
//     whose maximum another client changes), queue, barrier, twophase,
//     counter, multilock, membership, partitioner and discovery (one file each); holders.go runs the
//     acquire / hold / release loop the holder workloads share, audit.go
//     reads back what the clients left once they stopped.
//   - Deliberately broken workloads (lock_broken.go, Register.Broken) and
//     the mutants (*_mutant.go): a recipe with one safety step removed,
//     which only a fault exposes, each with its twin that keeps the step.
//   - The registry (workloads.go): All, Broken, MutantCases, and each
//     recipe's quick-tier faults.
//   - Worker processes (worker.go): RunWorkerIfAsked turns a binary into
//     one workload client, so that the freeze-client and kill-client faults
//     can stop or kill it.
//
// Invariants: every client runs on its own link (cluster.Env.NewClient),
// so a fault aimed at one client reaches no other; a workload returns only
// after closing every session it opened; a client records an operation's
// outcome as unknown whenever it cannot tell whether it took effect. The package
// imports history, cluster and checkers, and the recipe packages it
// drives.
package workloads
