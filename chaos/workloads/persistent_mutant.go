package workloads

import (
	"context"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
)

// PersistentExpiry is the persistent workload's mutant and its twin. The
// twin is the workload itself: a client counts itself present while its
// node's Present() is live, which the Session's lease ends before the
// server can expire the session. With Mutant set, a client counts its node
// present until its session is replaced by a new one or closed: it waits
// for the server's word (an expired session) where the lease speaks first,
// as a client without the lease does. Aimed with isolate-holder-follower
// (the holder's session on a follower cut off from the leader, a waiter's
// on the leader, every client link up, the holding idle), the leader
// expires the holder's session on its own clock, a waiter's Start creates
// the node, and the holder still counts itself present, until its link
// brings it the expiry after the heal: mutual exclusion catches the
// overlap. Without a fault, or under one its session survives (cut-short),
// the mutant is correct. Every client is a target: the placed fault pins
// them all, a holder on the cut server and a waiter on the leader.
type PersistentExpiry struct {
	Mutant bool
}

// Name is "persistent-expiry-mutant", or "persistent-expiry" for the twin.
func (w *PersistentExpiry) Name() string { return mutantName("persistent-expiry", w.Mutant) }

// QuickFaults names the faults that expose the persistent expiry mutant.
func (w *PersistentExpiry) QuickFaults() []string { return mutantFaults["persistent-expiry"] }

// Checkers are the persistent workload's.
func (w *PersistentExpiry) Checkers(cfg CheckConfig) []checkers.Checker {
	return (&Persistent{}).Checkers(cfg)
}

// Run runs the persistent workload, its presence the mutant's when Mutant
// is set.
func (w *PersistentExpiry) Run(ctx context.Context, env *cluster.Env) error {
	return (&Persistent{untilReplaced: w.Mutant}).Run(ctx, env)
}
