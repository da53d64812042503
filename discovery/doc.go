// Package discovery is service discovery in curator-x-discovery's layout
// and JSON, on a recipes.Session, so that Go services and Java services
// using Curator's ServiceDiscovery find each other.
//
// # Usage
//
//	d, err := discovery.New(s, "/services") // Curator's basePath; sends nothing
//	reg, err := d.Register(ctx, discovery.Instance{Name: "orders", ID: "orders-7", Address: "10.0.0.7", Port: 8080})
//	defer reg.Leave(ctx)                    // the node is re-created after session loss until then
//
// ExampleDiscovery_Register has it in full, compiled; ExampleProvider and
// ExampleDiscovery_Instances show the queries (example_test.go).
//
// # Layout and JSON
//
// An instance of service <name> with id <id> is the node
// "<base>/<name>/<id>", holding the instance's JSON as Curator 5.4's
// JsonInstanceSerializer writes it (see Instance for each field and its
// null handling):
//
//	{"name":"api","id":"i-1","address":"10.0.0.1","port":8080,"sslPort":null,
//	 "payload":{"@class":"com.example.Details","zone":"eu"},
//	 "registrationTimeUTC":1700000000000,"serviceType":"DYNAMIC","uriSpec":null}
//
// Dynamic instances are EPHEMERAL nodes, Static and Permanent ones
// PERSISTENT; the parents "<base>" and "<base>/<name>" are created, when
// missing, as container nodes, as Curator does. Curator's default
// serializer writes no "enabled" field (a reader takes a missing one as
// enabled); this package writes "enabled":false for a Disabled instance
// only, which Curator 5.4 reads and its ServiceProvider honours. Fields a
// later Curator adds are kept in Instance.Extra and written back.
//
// # Operations and costs
//
// ZooKeeper requests per call (connection errors retry the request; a
// call made with a done ctx returns ctx's error and sends nothing):
//
//	New, NewProvider, Instances/Pick  nothing
//	Register (Static)         1 create (+1 createContainer per missing parent and 1 create again;
//	                          +1 exists and 1 multi (delete + create) per node replaced)
//	Register (Dynamic)        1 exists, then persistent.Node.Start: 1 create + 1 exists (+ parents as above;
//	                          a node replaced: +1 multi, and the Node adopts it: +1 getData)
//	Update                    1 setData (Dynamic: +1 exists, the Node's watch set again;
//	                          Static: +1 exists, the owner check, and the creates of Register
//	                          if the node was gone)
//	Leave                1 exists + 1 delete
//	Names                     1 getChildren
//	Instances                 1 getChildren + 1 getData per instance
//	Instance                  1 getData
//	Provider.Watch            1 getChildren + 1 getData per instance (with watches)
//	Provider, on a change     added: 1 getChildren + 1 getData; changed: 1 getData; removed: 1 getChildren
//	Provider, reconnection    the load again (cache.ChildrenCache's rule)
//	Provider, session expiry  1 sync + the load again
//	Dynamic node kept         per event on it: 1 exists; gone: 1 create + 1 exists (persistent.Node)
//
// Each is measured on the wire by lab/integration/discovery's TestCost.
//
// # Invariants
//
//   - From Register until Leave or the Session's close, a Dynamic
//     Registration's node exists, with its latest data, within one round
//     trip of a usable session (a persistent.Node keeps it): a lost
//     session's node is created again on the next session, a node someone
//     deletes is created again, and Registration.Present says when it may
//     be absent. The one exception is another client's node at the same
//     path (another registrant of the id): Register replaces it, as
//     Curator does, but the persistent.Node then waits for it to go, so
//     two registrants of one id do not delete each other's nodes in a
//     loop.
//   - Leave never deletes, and Update never writes, another session's
//     node (for Static and Permanent ones: one other than the node the
//     Registration created, told apart by its czxid).
//   - A Provider's cache only ever holds what ZooKeeper held, and follows
//     it: every change fires a watch that the Provider reads after.
//   - Every payload Register accepts is one Curator 5.4 can read (see
//     Instance), unless its "@class" names a class the reader lacks:
//     Curator would fail its whole queryForInstances on, say, a bare JSON
//     array.
//
// # Differences from Curator
//
// Curator registers its instances again when it reconnects; here a
// persistent.Node keeps a Dynamic instance's node, so it also comes back
// after someone deletes it, and Registration.Present says when it may be
// absent. Update writes only our own node (with its version): a Dynamic
// instance's Update waits while it is absent, a Static one's creates it
// again, and either leaves another registrant's node alone; Curator's
// setData writes whatever node holds the path. Register refuses DynamicSequential (Curator appends
// a sequence number to the node's name, so the node cannot be found by its
// id); such instances registered by Curator are read like the others. A
// Provider never creates the service's node (Curator's ServiceCache does).
// Instances leaves out a node that is not an instance's JSON (Curator's
// query fails). Sticky keeps its choice by id (Curator compares whole
// instances). There is no Discovery.Close: Registrations and Providers end
// on their own (Leave, the Stream of Watch) or with their Session.
//
// # Goroutines and safety
//
// Discovery, Registration and Provider are safe for concurrent use. A
// Dynamic Registration runs one goroutine (its persistent.Node's) until
// Leave or the Session's close; a Provider's Watch runs three (its loop,
// its cache.ChildrenCache's and the one delivering to C) until its Stream
// ends. None outlives its Session's close.
//
// # Bad input
//
// Bad input, nil receivers and nil contexts follow the conventions of
// every zkrecipes package (see "Conventions" in package recipes). Here:
// Register, Update and NewProvider check their arguments before sending
// anything (ErrInvalidInstance, which wraps recipes.ErrBadArgument or
// recipes.ErrInvalidPath; recipes.ErrDataTooLarge for an instance too
// large for a request); a method on a nil receiver returns ErrNilReceiver.
// NewProvider is a constructor: Provider.Watch reads the instances and
// follows them until its Stream ends.
//
// # Permissions
//
// Register, Update and Leave need CREATE and DELETE on
// <base>/<service> and WRITE on the instance's node (Update); providers and
// queries need READ on <base>, the services and the instances. See
// docs/security.md.
package discovery
