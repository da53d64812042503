// Package partition splits a set of items among the live members of a
// group, each item owned by one member at a time: kazoo's SetPartitioner,
// on a recipes.Session.
//
//	p, err := partition.New(s, "/app/queues", []string{"q1", "q2", "q3"}, partition.WithID("worker-1"))
//	st := p.Run(ctx)                  // joins the group
//	for part := range st.C {          // this member's share, acquired
//		work(part.Context(), part.Items())  // until the members change
//		part.Release(ctx)             // stop, then give the items up
//	}
//	err = st.Err()                    // why C closed
//
// # Layout
//
// Under path: the members are a group (package group) at "<path>/party",
// and each item's lock a lock.Mutex at "<path>/locks/<item>". The default
// dialect is Curator's (GroupMember nodes "<path>/party/<id>", Curator
// InterProcessMutex nodes); WithDialect(recipes.Kazoo) is kazoo's
// SetPartitioner layout (ShallowParty nodes "<path>/party/<uuid
// hex32>-<id>", kazoo Lock nodes "<uuid hex32>__lock__<seq>"), so Go
// members and kazoo's SetPartitioner split one set together: the same
// members, the same partition function (Stride, kazoo's default), the same
// locks. Curator has no set partitioner.
//
// # Invariants
//
//   - Exclusive: a member holds an item only while it holds the item's lock,
//     so two members (Go or kazoo) never both hold an item. A Partition's
//     Context is done the moment it may be lost (its locks' causes: the
//     connection suspended under the default loss policy, the session's
//     lease run out or the session lost, a lock node deleted) or the member
//     is asked to give it up (ErrRebalance, ErrStopped).
//   - Release before others acquire: a Partition's locks are deleted only by
//     its Release, which cancels its Context first, or with its session,
//     whose lease ended the Context at the latest the lease margin before
//     the server can expire it. Run never deletes the locks of a Partition
//     it sent. So another member acquires an item only after this member
//     was told to stop (its Context done) and released it, or after its
//     session ended.
//   - Stable split: Run splits the set only once the members' ids held still
//     for the boundary (WithBoundary), each member with the same function,
//     and takes its share only after releasing the previous one. Once the
//     group holds still and every member released what it was asked to,
//     every item is in exactly one member's Partition (with a partition
//     function that gives every item to exactly one member, as Stride
//     does), within the boundary plus the time to take the locks.
//   - Rebalancing: every change of the members' ids (a member joined, left,
//     or died and its session expired) ends each member's Partition with
//     ErrRebalance; each member releases, and allocates again once the ids
//     held still for the boundary. A member whose session was lost joins
//     again (its group node is re-created) and allocates again after its
//     Release.
//
// Progress needs every member to Release what it is asked to: a member
// that holds on to a Partition keeps its items, and a member whose share
// names them waits for their locks (kazoo's SetPartitioner works the same
// way).
//
// # Costs
//
// Run: joining 1 create + 1 exists; following the members, 1 getChildren +
// 1 getData per member, then 1 getChildren + 1 getData per join and 1
// getChildren per leave (group.Watch); per allocation, per item of the
// share 1 create + 1 getChildren (lock.Mutex.Lock on a free lock; +1
// getData to wait behind a holder) and 1 getData in the background (the
// watch on the lock node); Release 1 delete per item; the end of the
// stream 1 exists + 1 delete (leaving). A change of the members costs each
// member a Release and an allocation, and wakes each member once per
// watched node that changed.
//
// # Goroutines and safety
//
// Partitioner and Partition are safe for concurrent use. Run runs 1
// goroutine, group.Watch's 3, the member node's 1,
// and 1 more while it takes the locks, until its stream's C is closed. A
// Partition runs none.
//
// # Bad input
//
// Bad input, nil receivers and nil contexts follow the conventions of
// every zkrecipes package (see "Conventions" in package recipes). Here:
// New refuses no items, a duplicate or an item that is not
// one path segment (ErrInvalidItems), a bad id (group.ErrInvalidID), a
// negative boundary or a nil partition function (recipes.ErrBadArgument).
// Run on a nil Partitioner returns a Stream that is already closed, whose
// Err is ErrNilPartitioner. A done ctx sends nothing. Methods on a nil
// *Partition return ErrNilPartition (Context: a context done with it).
//
// # Permissions
//
// Run needs what package group needs at <path>/party and what package
// lock's Mutex needs at <path>/locks/<item> for every item. See
// docs/security.md.
package partition
