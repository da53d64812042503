// Package group is group membership on a recipes.Session: a process joins
// a group with an id (and a payload), stays listed while it lives, and
// leaves; anyone can list the members or follow them as they change.
//
//	m, err := group.Join(ctx, s, "/app/workers", "worker-1", group.WithData(addr))
//	defer m.Leave(ctx)
//	snap, err := group.Members(ctx, s, "/app/workers")  // sorted by id
//	w := group.Watch(ctx, s, "/app/workers")            // a Snapshot per change
//	for snap := range w.C { ... }
//	err = w.Err()                                       // why C closed
//
// # Layouts
//
// Curator's GroupMember (the default): a member is the ephemeral node
// "<path>/<id>", its data the member's payload; every child of the path is
// a member, its name the id. kazoo's Party (WithDialect(recipes.Kazoo)): a
// member is the ephemeral node "<path>/<uuid hex32>__party__", its data
// the id (UTF-8); only children whose name contains "__party__" are
// members. kazoo's ShallowParty (WithShallowParty), the layout of kazoo's
// SetPartitioner: a member is the ephemeral node "<path>/<uuid
// hex32>-<id>", its data the id; every child is a member, its id the name
// after the first "-". Go members and Curator's GroupMember (or kazoo's
// Party, or ShallowParty) on one path see each other. The group node and its missing parents are created
// as container nodes, as Curator creates them (kazoo creates persistent
// ones; either works for both).
//
// # Invariants
//
// A member is a persistent.Node: its node is created again after its
// session is lost or someone deletes it, so a live member is listed again
// as soon as its session is usable. Join returns once the node exists, so
// the member is listed from then on; an id still held by the node of an
// earlier session (a restarted process) is taken over once that session
// expires, which is within one session timeout of the earlier process's
// death. A member whose process died (its session closed or silent) stops
// being listed when its session ends: at once for a closed session, one
// session timeout after the last sign of life otherwise, when the server
// expires the session and deletes its ephemeral node. A Member's
// Present() context is done whenever its node may be absent.
//
// Members and Watch read the path and then each member, not atomically: a
// Snapshot can miss a member that joined, or show one that left, while it
// was being read; Watch then sends a newer one.
//
// # Costs
//
// Join: 1 create + 1 exists (+1 createContainer per missing level). Leave:
// 1 exists + 1 delete. Update: 1 setData + 1 exists. A member's node
// re-created: 1 create + 1 exists. Members: 1 getChildren + 1 getData per
// member. Watch: the same for its first Snapshot, with watches, then per
// change: a join 1 getChildren + 1 getData, a leave 1 getChildren, an
// update 1 getData; a reconnection or a session loss, a read of the path
// and of every member again (it follows the group with a
// cache.ChildrenCache, whose costs it has); every change wakes each
// watching Session once per watched node that changed (the path's child
// watch, the member's data watch).
//
// # Goroutines and safety
//
// Every function and method is safe for concurrent use. A Member runs one
// goroutine (its persistent.Node's) until Leave or the Session's close.
// A Watch runs 3 goroutines until its C is closed.
//
// # Bad input
//
// Bad input, nil receivers and nil contexts follow the conventions of
// every zkrecipes package (see "Conventions" in package recipes). Here:
// Join, Members and Watch validate their arguments before sending
// anything: an invalid path or, for Join, one in /zookeeper
// (recipes.ErrInvalidPath), an empty id or one that is not a single path
// segment in Curator's or the ShallowParty layout (ErrInvalidID;
// ValidateID checks an id alone), WithData with a kazoo layout
// (recipes.ErrBadArgument), a member node too large for the session's
// requests (recipes.ErrDataTooLarge). Methods on a nil *Member return
// ErrNilMember.
//
// # Permissions
//
// Join, Update and Leave need what package persistent needs under the
// group's path (a member is a persistent node there: CREATE, DELETE on the
// path, WRITE on the member's node); Members and Watch need READ on the
// path and the members. See docs/security.md.
package group
