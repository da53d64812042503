// Package barrier holds ZooKeeper's barrier recipes on a recipes.Session.
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
// Both types make their own ZooKeeper calls through Session.Conn, with the
// core's retry helpers: a request that fails for connection reasons is sent
// again once the session is usable, and every wait honours ctx.
package barrier
