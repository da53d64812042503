// Package persistent keeps an ephemeral node in ZooKeeper for as long as a
// process wants it there, whatever happens to its session: Curator's
// PersistentNode (in its ephemeral modes) on a recipes.Session. A plain
// ephemeral node vanishes with its session, and go-zookeeper then opens a
// new session without telling anyone; a Node notices and creates the node
// again, with the latest data.
//
//	n, err := persistent.New(s, "/app/members/worker-1", persistent.WithData(addr))
//	err = n.Start(ctx)      // returns once the node exists
//	<-n.Present().Done()    // the node may be absent (context.Cause says why)
//	err = n.SetData(ctx, b) // on the node now, and on every re-creation
//	err = n.Leave(ctx)      // deletes it and stops
//
// # Modes
//
// Plain (the default): the node is New's path, an EPHEMERAL node.
// Protected-sequential (WithProtected): New's path is "<parent>/<name>" and
// each incarnation is "<parent>/_c_<uuid36>-<name><seq10>", an
// EPHEMERAL_SEQUENTIAL node named as Curator's protected mode names it and
// made by the core's protected create; Path changes with each re-creation.
// Missing parents are created as container nodes (as Curator's
// creatingParentContainersIfNeeded makes them), so ZooKeeper removes a
// parent some time after its last child went.
//
// # Behaviour (and how it compares with Curator's PersistentNode)
//
//   - Deleted by someone else: created again at once (Curator does the
//     same), and Present is done (recipes.ErrNodeDeleted) meanwhile.
//   - Session lost: Present is done (recipes.ErrSessionLost) when the
//     Session reports StateLost, which its lease does at the latest one
//     negotiated timeout after the last answer it got, no later than the
//     server can expire the session; the node is created again as soon as
//     go-zookeeper has a new session. If the same session comes back (the
//     lease was only cautious), the node is checked and kept.
//   - A plain path held by another session's node (an earlier incarnation
//     of a restarted process whose session has not expired yet, another
//     Node with the same path): the Node waits for that node to go and then
//     creates its own. Curator instead takes the node over and writes its
//     data into it; this package never writes or deletes a node it has not
//     seen to be its own (ephemeral owner and czxid).
//   - Data written by someone else: left alone (as Curator does); the next
//     SetData or re-creation writes ours again.
//
// Re-creation latency: a deletion is acted on when its watch notification
// arrives, and a session loss when the new session is established; either
// way the node is back after 1 create and 1 exists (plus 1
// createContainer per missing parent level), with no back-off on that
// path. Only a create the server refuses (zk.ErrNoAuth, ...) is retried
// with a back-off, from 100 ms doubling up to the session timeout.
//
// # Costs
//
// New, Path, Data, Present: nothing sent. Start: 1 create + 1 exists (the
// watch). Each re-creation: the same. SetData: 1 setData + 1 exists
// (re-arming the watch its own write fired). A data change by someone
// else: 1 exists. Leave: 1 delete (protected) or 1 exists + 1 delete
// (plain: the delete is owner-checked). After StateLost with the same
// session back: 1 exists. While waiting for another session's node at a
// plain path: 1 getData, then 1 exists per change of that node. Watches are
// the Session's shared ones (recipes.Session.WatchExists): one go-zookeeper
// watcher per path whatever the number of Nodes and waiters.
//
// # Goroutines and safety
//
// Every method is safe for concurrent use. A started Node runs one
// goroutine, which does every create, write and watch of the node, one at
// a time; it ends with Leave, with a Start that failed, or when the
// Session is closed (whose close deletes the node on the server). No
// goroutine of the Node outlives those.
//
// # Bad input
//
// Bad input, nil receivers and nil contexts follow the conventions of
// every zkrecipes package (see "Conventions" in package recipes). Here:
// New also refuses the root (recipes.ErrInvalidPath), and methods on a
// nil *Node return ErrNilNode.
//
// # Permissions
//
// Start and every re-creation need CREATE on the parent and READ on the
// node (its owner check); SetData needs WRITE on the node; Leave needs
// DELETE on the parent. An authenticated Session refuses a parent anyone
// may create or delete under (recipes.ErrOpenParent). See
// docs/security.md.
package persistent
