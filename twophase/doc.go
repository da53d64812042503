// Package twophase is a two-phase commit on ZooKeeper: a Coordinator begins
// a transaction among named sites, each Site (a participant of the
// protocol) votes commit or abort, and one durable decision node says what happened. It tolerates the
// failure of the coordinator and of participants: whoever comes back
// resumes from what is in ZooKeeper alone.
//
// # Usage
//
//	p, err := twophase.NewSite(s, "/app/transfers", "bank-a", twophase.WithDeadline(time.Minute))
//	for prop := range p.Run(ctx).C { // each site: every transaction that names it
//		err = prop.Vote(ctx, twophase.Commit)  // after preparing prop.Payload()
//		d, err := prop.Await(ctx)              // the one decision: apply it, then
//		err = prop.Finish(ctx)                 // so that it is not delivered again
//	}
//	c, err := twophase.NewCoordinator(s, "/app/transfers", twophase.WithVoteTimeout(10*time.Second))
//	tx, err := c.Begin(ctx, "transfer-42", []string{"bank-a", "bank-b"}, payload)
//	d, err := tx.Decide(ctx)
//
// The package Example has it in full, compiled (example_test.go).
//
// # Layout
//
// Under a root path, transaction tx is:
//
//	<root>/<tx>                   persistent, data = payload
//	<root>/<tx>/<site>            persistent, one per site (created with <tx> in one multi)
//	<root>/<tx>/<site>/alive      ephemeral: the site's session is working on tx
//	<root>/<tx>/<site>/vote       persistent, "commit" or "abort", created once
//	<root>/<tx>/<site>/done       persistent: the site applied the decision (Finish)
//	<root>/<tx>/decision          persistent, "commit" or "abort\n<reason>", created once
//
// Site names and transaction ids are single path segments; "decision" is
// not a valid site name.
//
// # Protocol
//
//  1. Begin creates the transaction and its site nodes in one multi.
//  2. Each Site learns it (a child watch on the root), creates
//     its liveness node, and delivers a Proposal; the application prepares
//     and votes (Proposal.Vote), then waits (Proposal.Await, a watch on the
//     decision node); once it has applied the decision it calls
//     Proposal.Finish, so a restarted participant gets back exactly the
//     transactions it has not finished.
//  3. Tx.Decide watches each site node (one child watch per site) and the
//     decision node. It writes Commit once every site voted commit; Abort at
//     the first abort vote, when a site's liveness node disappears before
//     that site voted (its session ended), or at its vote deadline with votes
//     missing.
//  4. A participant whose own deadline passes with no decision writes Abort
//     itself (safe: see below), so participants are not blocked forever by a
//     dead coordinator. A restarted coordinator finishes open transactions
//     (Pending, Resume, Decide).
//  5. Collect deletes transactions decided longer ago than the retention
//     period, and aborts ones left undecided that long.
//
// # Invariants
//
//   - One decision: the decision node is created once (a create fails with
//     NodeExists afterwards); whoever creates it decides and everyone else,
//     coordinator included, reads it. A create whose answer was lost is
//     retried and then reads back what is there.
//   - Commit only with unanimous commit votes: only Decide writes Commit,
//     and only after reading a commit vote node of every site. Votes are
//     written once and never change (Vote returns ErrVoteConflict).
//   - Abort is always safe to write: nobody acts on commit before the
//     decision node says commit, so a participant or a Collect may abort an
//     undecided transaction at any time.
//   - Every participant ends with the decision: it is persistent until
//     collected, Await watches it again after a reconnection or a new
//     session, and Run delivers a transaction (decided or not)
//     until its site calls Finish.
//
// # Cost and notifications
//
// Per transaction of n sites, with no faults: Begin 1 multi; each site: 1
// notification on the root, about 4 reads and 1 create to learn it, 1 create
// to vote, 1 exists (watch) and 1 getData to learn the decision, 1 multi,
// 1 exists and 1 delete to finish (the liveness node is deleted only while
// it is our session's); the coordinator: 1 exists and n getChildren
// (its watches), 1 getData per vote, 1 create. The decision wakes
// n watchers; the votes wake the coordinator's n watches. Notifications are
// O(n): no site watches another site, and the coordinator stops watching a
// site once it voted. (Discovery is the exception: each Begin wakes every
// participant whose Run follows the root, once.) Each method's doc
// lists its requests.
//
// Calls take a context. go-zookeeper cannot abandon a request once sent, so
// ctx is checked before each request and honoured while waiting (a call
// made with a done ctx returns ctx's error and sends nothing; one already
// sent is waited for, see package recipes); requests whose outcome is
// unknown (connection lost) are sent again once connected, and every write
// is idempotent under that retry.
//
// Coordinator, Tx, Site and Proposal are safe for concurrent use.
// Bad input, nil receivers and nil contexts follow the conventions of
// every zkrecipes package (see "Conventions" in package recipes). Here: a
// write larger than the session's request limit is refused before it is
// sent (recipes.ErrDataTooLarge), Begin's and the Collect multi it implies
// included, and a method on a nil receiver that returns an error returns
// ErrNilReceiver.
//
// # Permissions
//
// Coordinator.Begin needs CREATE on the root and under <root>/<tx> (one
// multi); a Site needs CREATE under <root>/<tx>/<site> (alive, vote,
// done) and DELETE there (its alive node), and may CREATE the decision (an
// abort at its deadline); Collect needs DELETE on every level of a
// finished transaction. Begin's site nodes carry the coordinator's ACL, so
// participants need its principal (or a grant from an ACL provider) to
// vote. Everything else reads. See docs/security.md.
package twophase
