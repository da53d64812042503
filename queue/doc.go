// Package queue holds ZooKeeper's distributed queue recipe on a
// recipes.Session: a FIFO Queue of persistent sequential "qn-<seq>" nodes
// (the format of ZooKeeper's own recipe and of Curator's
// SimpleDistributedQueue, which can share the path), a priority queue
// (WithPriority: the priority is part of the node name, so one getChildren
// orders items by priority, then sequence), and claim/ack consumption for
// at-least-once processing (kazoo's LockingQueue protocol: an ephemeral
// claim node per item being processed).
//
// # Usage
//
//	q, err := queue.New(s, "/app/jobs")          // sends nothing
//	_, err = q.Put(ctx, []byte("resize image 42")) // 1 create
//	it, err := q.Take(ctx)                        // blocks until an item is there; deletes it
//	fmt.Printf("%s: %s\n", it.Name, it.Data)
//
// The package Example has it in full, compiled; ExampleQueue_Claim shows claim/ack
// consumption (example_test.go).
//
// Delivery: Take deletes the item it returns, so each item reaches exactly
// one consumer (at most once if the connection breaks during the delete:
// see ErrUncertain). Claim keeps the item until Ack; a consumer whose
// session dies loses its claims and the items are delivered again (at least
// once). While a Claim's Context is not done, no other consumer of this
// package holds a live claim on the same item.
//
// The delete rule: a claim node's path, "<claims>/<item>", is the same for
// every claimant, so a delete "by path" could remove another consumer's
// claim (ours gone by a delete whose reply was lost, or with an expired
// session, and someone else's created in its place), and a third consumer
// would then claim an item that is still being worked on. This package
// deletes a claim node only after reading it and seeing its own session as
// the node's ephemeral owner, and then with the version read: at claim
// time (the read that also arms the claim's watch), and again before every
// retry after an ambiguous delete. Ack deletes the claim and the item in
// one multi, sent only under the session that read the claim node as its
// own and only while no notification said the node went: nothing of this
// package deletes another session's claim node, so the node the multi
// deletes is ours. The multi also checks the claim node's version, but that
// tells nodes apart only after a foreign setData (every claim node is
// created at version 0 and never written), and a multi can check no owner
// or czxid: a foreign client that deletes our claim node, followed by
// another consumer's claim before our watch reports the delete, is the one
// window left. The retries are the core's guaranteed delete with our
// session, which is owner-checked in the same way.
//
// Outcomes of Claim.Ack are exact: nil only when we deleted the item under
// our own claim; ErrClaimLost only when the item is, or will be, delivered
// again (our session died, our claim node was deleted, or the claim was
// released); ErrUncertain when a multi of ours may have been applied and
// that could not be learned (Ack again to learn more). Claim.Release
// answers as every holding's Release does (see recipes.Held.Release): nil
// only when it gave back a live claim (our claim node is deleted, or will
// be while our session lives); otherwise an error that errors.Is
// recipes.ErrReleased: with ErrClaimLost when the claim was already gone
// (released before, session died, claim node deleted), sending nothing;
// after an Ack, recipes.ErrReleased alone. Both say why in their doc
// comments, and a claim's Context is cancelled with ErrClaimLost
// and recipes.ErrNodeDeleted the moment its claim node is deleted or
// replaced. A Claim is a recipes.Held: its Fence is its claim node's czxid,
// and Claim.FencedMulti guards a write with that node's version.
//
// Cost: consumers cache the sorted child list and list again only when it
// runs out (or, for a priority queue, after their child watch fired):
// Take is 1 getData + 1 delete, Claim 1 create + 1 exists (owner check and
// the claim's watch) + 1 getData, Ack 1 multi (check + 2 deletes), Release
// 1 delete, Claim.FencedMulti 1 multi, Put 1 create, PutAll 1 multi. Sequence numbers are compared with
// RFC 1982 serial arithmetic (recipes.SortBySeq), so the wrap of the
// parent's counter after 2^31 items does not reorder the queue.
//
// Bad input, nil receivers and nil contexts follow the conventions of
// every zkrecipes package (see "Conventions" in package recipes). Here:
// New validates the claim path and claim data too; a method on a nil
// *Queue or *Claim that returns an error returns ErrNilReceiver. A write
// that cannot fit the session's request limit, even one that would fit
// were it not for the ACL the session's ACL provider gives the node, is
// refused before it is sent: Put, PutAll and Claim fail with
// recipes.ErrDataTooLarge.
//
// # Permissions
//
// Put and PutAll need CREATE on the queue's path; Take, Poll and Claim.Ack
// need DELETE there and READ on the path and the item; Claim and
// Claim.Release need CREATE and DELETE on the claim path (default
// <path>/taken, created under the queue's path the first time); Peek and
// Len need READ. With recipes.DefaultAuthACL an outsider can list and read
// items but can neither put, take, claim nor ack. See
// docs/security.md.
package queue
