// Package tap reads the ZooKeeper frames of a recipes.Session's
// connections, between the dialer (and TLS) and go-zookeeper, so that the
// Session learns what go-zookeeper does not tell: the czxid of the nodes
// it creates (a holding's fencing token, without a getData), when the
// server last heard from it (the lease), which replies refused a request
// for missing authentication, and each request's outcome and duration
// (the Session's observer). It also corrects go-zookeeper's
// re-registration of watches after a reconnection (the zxid it sends, and
// the data race in reading it). It is the Session's own machinery: recipes
// is its one importer, and it imports nothing of recipes (it reports
// through the functions of Sinks). tap.go holds the Tap and its dialer,
// conn.go the connection that reads the frames (and when a reply renews the
// lease), gate.go the setWatches gate, calls.go the timing of calls. Cost: nothing on the
// wire, but the pings the lease asks for (PingEvery).
package tap
