package workloads

import (
	"context"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// Workload drives one recipe (or raw ZooKeeper) with several clients and
// records what they observe. A workload per recipe plugs in here.
type Workload interface {
	// Name is short and stable: scenarios are named "<workload>/<fault>".
	Name() string
	// Run makes env.Clients clients with env.NewClient (each on its own
	// link), drives them until ctx is done, records their events in
	// env.Rec, and returns only after closing every session it opened.
	Run(ctx context.Context, env *cluster.Env) error
	// Checkers returns the invariants to prove over the history.
	Checkers(cfg CheckConfig) []checkers.Checker
}

// SlowStarter is a workload whose set-up takes a good part of the time
// before its first fault (the cache workload: six sessions, then each
// cache's first read). The runner holds the first fault until it runs at
// the throughput checker's rate, for at most two session timeouts (see
// chaos.Runner). Every other workload is struck on schedule: the timing
// its mutants are aimed by stays as drawn.
type SlowStarter interface {
	SlowStart() bool
}

// Paced is a workload whose clients wait for one another by design: a
// bystander holds for session timeouts, or pauses before each round of a
// barrier, so that its target spends the scenario waiting in one
// operation, the state its faults are aimed at. Few operations complete
// before the first fault however fast the ensemble, so the runner's rate
// floor (checkers.Throughput) would call every such scenario not
// exercised. The runner asks instead that the target had that operation
// pending when the first fault began (checkers.PendingAtFault), and holds
// the first fault back until it has (for at most two session timeouts).
type Paced interface {
	// PacedOn names the target client and the operation it waits in.
	PacedOn() (client string, fn history.Fn)
}

// CheckConfig is what a workload's checkers take from the run's
// configuration (chaos.Config fills it in, with its defaults).
type CheckConfig struct {
	// Clients is how many clients the workload runs.
	Clients int
	// LivenessBound is how soon after a heal the workload must progress.
	LivenessBound time.Duration
	// CheckTimeout bounds each linearizability search.
	CheckTimeout time.Duration
}

// ProcessWorkload is a Workload whose clients run in worker processes, so
// the freeze-client fault can stop them.
type ProcessWorkload interface {
	Workload
	InProcesses() bool
}

// QuickFaulter is a Workload that takes only some faults in the quick
// tier, to keep it short; the full tier gives it every fault it supports.
type QuickFaulter interface {
	Workload
	// QuickFaults names the faults of its quick-tier scenarios.
	QuickFaults() []string
}
