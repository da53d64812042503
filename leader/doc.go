// Package leader is leader election on the recipes core: an Election is one
// participant (Campaign, Release through its Term, Leader, Participants,
// Watch), Run is the selector loop with automatic requeue, Do runs a
// function once as leader, and an optional hook reports lifecycle events.
//
// # Usage
//
//	e, err := leader.New(s, "/services/billing/leader", leader.WithData(id)) // sends nothing
//	term, err := e.Campaign(ctx)       // returns once this participant leads
//	defer term.Release(ctx)            // 1 delete; wakes the participant behind
//	<-term.Context().Done()            // leadership may be lost (context.Cause says why)
//	_, err = term.FencedMulti(ctx, &zk.SetDataRequest{Path: "/services/billing/state", Data: b, Version: -1})
//
// ExampleElection_Campaign has it in full, compiled; ExampleRun shows the selector
// loop and ExampleDo a function run once as leader (example_test.go).
//
// # Protocol
//
// Each participant creates a protected ephemeral sequential node under the
// election's path; the lowest sequence leads; every other participant
// watches only the node right ahead of it, so a resignation wakes exactly
// one participant. Watch watches only the head node (or, while nobody
// leads, the path's children). A Session keeps one watch per node however
// many of its waiters wait on it or give up waiting (recipes.Session.WatchData),
// so abandoned campaigns and observers leave nothing behind that grows.
// Participants are ordered by serial arithmetic on the sequence suffix,
// correct across the wrap of the path's counter; a dialect's TextOrder
// variant orders as Curator and kazoo do, for elections shared with them.
// The wire format is Curator's LeaderLatch by default
// ("_c_<uuid36>-latch-<seq>", data = the participant id), so Go and Java
// services can share an election; Curator's LeaderSelector
// (WithDialect(recipes.CuratorSelector), the lock names) and kazoo's
// Election (WithDialect(recipes.Kazoo)) are options.
//
// # Safety
//
// A term begins only after the core found our node first in line and an
// owner check (1 getData, which also sets the term's watch on the node:
// recipes.Holding.Check) found it present with our current session as its
// ephemeral owner: go-zookeeper silently replaces an expired session, and
// trusting a node of an old session is how Curator's LeaderLatch had two
// leaders (CURATOR-696, fixed there with the same check). A term's context is cancelled, with a cause, the moment
// leadership may be lost: by default at disconnect (recipes.StepDownOnSuspend);
// also when the session is lost, or our node is deleted or written by
// someone else; and, whatever the loss policy and whatever go-zookeeper has
// noticed, at the session's lease deadline (cause recipes.ErrLeaseExpired):
// the lease margin (recipes.WithLeaseMargin, a tenth of the negotiated
// session timeout by default) before the server can expire the session, on
// the leader's own monotonic clock (see recipes.Session.LeaseDeadline).
// go-zookeeper's disconnect alone is no such bound: after a watch event or a
// late reply just before a partition it can come as late as the expiry. A
// leader that checks its term's context before each action therefore stops
// before anyone else can be elected, provided the action takes effect
// within the margin; a leader paused between the check and the action is
// not covered, only a fenced write (Term.FencedMulti) is. A term that ended by loss
// gives its node up by itself. Terms carry a fencing token (our node's
// czxid) that strictly grows from leader to leader; Term.FencedMulti makes
// ZooKeeper itself reject writes of a leader whose node is gone.
// Term.Release answers as every holding's Release does (see
// recipes.Held.Release): nil only when it ended a live term; otherwise an
// error that errors.Is recipes.ErrReleased (ErrResigned, which matches it,
// for a second Release; the loss's cause too for a term that ended by
// loss), sending nothing.
//
// # Goroutines
//
// Election and Term are safe for concurrent use. An idle Election owns no
// goroutine. A Term owns one registration on its context (a watch on its
// node runs in the session's background until the term ends); Watch runs
// two goroutines until its Stream's C closes (its ctx ends, or the reader
// calls Stop); the event hook runs on a goroutine that exists only while
// events are queued. Closing the session ends the first two; the event
// goroutine ends once the queue is drained, so a hook that never returns
// keeps it (see WithEvents).
//
// # Permissions
//
// Campaign and Term.Release need CREATE and DELETE on the election's path;
// Leader, Participants and Watch need READ on the path and on the
// participants' nodes (an observer needs nothing else). With
// recipes.DefaultAuthACL an outsider can read who leads but can neither
// campaign nor remove a term's node. See docs/security.md.
//
// Bad input, nil receivers and nil contexts follow the conventions of
// every zkrecipes package (see "Conventions" in package recipes): New's
// errors are Do's too, and a method on a nil receiver that returns an
// error returns ErrNilReceiver.
package leader
