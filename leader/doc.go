// Package leader is leader election on the recipes core: an Election is one
// participant (Campaign, Resign through its Term, Leader, Participants,
// Observe), Run is the selector loop with automatic requeue, Do runs a
// function once as leader, and an optional hook reports lifecycle events.
//
// # Protocol
//
// Each participant creates a protected ephemeral sequential node under the
// election's path; the lowest sequence leads; every other participant
// watches only the node right ahead of it, so a resignation wakes exactly
// one participant. Observe watches only the head node. The wire format is
// Curator's LeaderLatch by default ("_c_<uuid36>-latch-<seq>", data = the
// participant id), so Go and Java services can share an election; Curator's
// LeaderSelector (the lock names) and kazoo's Election are options.
//
// # Safety
//
// A term begins only after the core found our node first in line and an
// owner check (1 exists) found it present with our current session as its
// ephemeral owner: go-zookeeper silently replaces an expired session, and
// trusting a node of an old session is how Curator's LeaderLatch had two
// leaders (CURATOR-696, fixed there with the same check). A term's context is cancelled, with a cause, the moment
// leadership may be lost: by default at disconnect (recipes.StepDownOnSuspend),
// which is about a third of the session timeout before the server can expire
// the session and elect someone else; also when the session is lost, or our
// node is deleted or written by someone else. A term that ended by loss
// gives its node up by itself. Terms carry a fencing token (our node's
// czxid) that strictly grows from leader to leader; Term.FencedMulti makes
// ZooKeeper itself reject writes of a leader whose node is gone.
//
// # Goroutines
//
// Election and Term are safe for concurrent use. An idle Election owns no
// goroutine. A Term owns one registration on its context (a watch on its
// node runs in the session's background until the term ends); Observe runs
// two goroutines until its channel closes; the event hook runs on a
// goroutine that exists only while events are queued. Closing the session
// ends all of them.
package leader
