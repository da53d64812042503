package workloads

import (
	"context"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
)

// PartitionerStale is the partitioner's stale-member mutant and its twin:
// the partitioner workload with at least 4 members and no churn, whose
// first (c1, the target, the only client the faults reach) stops its
// stream after a loss (it leaves the group) and runs again once it
// released the lost Partition, the way kazoo's SetPartitioner is used
// after its failure state. The twin's target releases at once. With Mutant
// set, the target does not stop working when its Partition is lost: it
// goes on with its items (its fenced writes go on, and ZooKeeper rejects
// them) and believes it holds them for two session timeouts, instead of
// stopping at the loss signal.
//
// Under partition-expire its session expires and its locks go with it;
// having left the group, it is not among the members the others split the
// set among, so within a boundary they take its items while the mutant
// still believes it holds them: mutual-exclusion catches it. Without a
// fault the target never loses a Partition; under a short cut (cut-short)
// its session lives, and so do its locks, which the others wait for until
// it releases: the mutant is then correct, only slow.
type PartitionerStale struct {
	Mutant bool
}

// Name is "partitioner-stale-mutant", or "partitioner-stale" for the twin.
func (w *PartitionerStale) Name() string { return mutantName("partitioner-stale", w.Mutant) }

// QuickFaults names the faults that expose the stale-member mutant (see
// workloads.go).
func (w *PartitionerStale) QuickFaults() []string { return mutantFaults["partitioner-stale"] }

// Checkers are the partitioner workload's.
func (w *PartitionerStale) Checkers(cfg CheckConfig) []checkers.Checker {
	return partitionCheckers(cfg, max(4, cfg.Clients))
}

// Run runs the target and the bystanders until ctx is done and the set is
// owned; see PartitionerStale.
func (w *PartitionerStale) Run(ctx context.Context, env *cluster.Env) error {
	cs, closeLinks, err := mutantClients(env, 4, 1)
	if err != nil {
		return err
	}
	defer closeLinks()
	roles := make([]memberRole, len(cs))
	roles[0].restart, roles[0].stale = true, w.Mutant
	return runPartitioners(ctx, env, cs, roles)
}
