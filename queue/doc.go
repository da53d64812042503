// Package queue holds ZooKeeper's distributed queue recipe on a
// recipes.Session: a FIFO Queue of persistent sequential "qn-<seq>" nodes
// (the format of ZooKeeper's own recipe and of Curator's
// SimpleDistributedQueue, which can share the path), a priority queue
// (WithPriority: the priority is part of the node name, so one getChildren
// orders items by priority, then sequence), and claim/ack consumption for
// at-least-once processing (kazoo's LockingQueue protocol: an ephemeral
// claim node per item being processed).
//
// Delivery: Take deletes the item it returns, so each item reaches exactly
// one consumer (at most once if the connection breaks during the delete:
// see ErrUncertain). Claim keeps the item until Ack; a consumer whose
// session dies loses its claims and the items are delivered again (at least
// once).
//
// Cost: consumers cache the sorted child list and list again only when it
// runs out (or, for a priority queue, after their child watch fired):
// Take is 1 getData + 1 delete, Claim 1 create + 1 getData, Ack 1 multi,
// Put 1 create, PutAll 1 multi. Sequence numbers are compared with RFC 1982
// serial arithmetic (recipes.SortBySeq), so the wrap of the parent's
// counter after 2^31 items does not reorder the queue.
package queue
