// Package barrier holds ZooKeeper's barrier recipes on a recipes.Session.
//
// # Usage
//
//	b, err := barrier.New(s, "/app/start") // sends nothing
//	err = b.Set(ctx)                       // coordinator: 1 create
//	err = b.Wait(ctx)                      // each worker: returns once the node is gone
//	err = b.Remove(ctx)                    // coordinator: 1 delete, wakes every waiter
//	d, err := barrier.NewDouble(s, "/app/round", 5)
//	err = d.Enter(ctx)                     // returns once 5 have entered
//	err = d.Leave(ctx)                     // returns once all 5 have left
//
// ExampleBarrier and ExampleDoubleBarrier have it in full, compiled (example_test.go).
//
// Barrier (Curator's DistributedBarrier): Set creates a persistent node,
// Remove deletes it, Wait returns once it is gone (an exists-watch loop).
// Removing the node wakes every waiter: a barrier releases everyone at once.
//
// DoubleBarrier (ZooKeeper's double barrier, Curator's
// DistributedDoubleBarrier wire format): n members enter, nobody passes
// Enter before n have entered (the n-th creates "<path>/ready"); nobody
// passes Leave before all have left (the lowest member waits on the highest,
// the others on the lowest). Members are ephemeral "<path>/<uuid36>" nodes
// (kazoo: "<uuid hex32>"), so a member whose session dies drops out.
//
// Both types run their ZooKeeper calls under the session's rules, as every
// recipe does: a request is sent only on a usable session, one that fails
// for connection reasons is sent again once the session is usable (a write
// only where its repeat is safe), and every wait honours ctx. A call made
// with a done ctx returns ctx's error and sends nothing; a ctx done later is
// honoured before the next request and while waiting, but a request already
// sent is waited for (see package recipes). One exception: once everyone
// has left, Leave deletes "ready" even with a done ctx while the session is
// usable, and returns nil only once it is gone; it deletes only the node of
// the round that ended, never a next round's (DoubleBarrier.Leave).
//
// Bad input, nil receivers and nil contexts follow the conventions of
// every zkrecipes package (see "Conventions" in package recipes). Here:
// NewDouble with n < 1 is ErrMembers (and recipes.ErrBadArgument); a path
// too long for the barrier's requests is recipes.ErrDataTooLarge; a
// method on a nil receiver returns ErrNilReceiver (Name returns "").
//
// # Permissions
//
// Barrier.Set and Remove need CREATE and DELETE on the barrier node's
// parent; Wait needs nothing beyond an exists watch on the node, which
// ZooKeeper 3.8.4 and later 3.8s and 3.9.2 and later check for READ while
// the node exists (ZOOKEEPER-2590; older servers check nothing). DoubleBarrier's Enter
// and Leave need CREATE and DELETE on the barrier's path (member nodes and
// ready) and READ on it, and on those 3.8.4+ and 3.9.2+ servers READ on
// ready and the members' nodes too (exists watches). See
// docs/security.md.
package barrier
