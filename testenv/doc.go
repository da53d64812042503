// Package testenv starts a real ZooKeeper ensemble for tests, the chaos suite
// and the benchmarks, puts every server's client port behind an in-process
// Toxiproxy proxy, and injects faults on the wire and on the servers.
//
// Two backends run the servers:
//
//   - containers (the default when a Docker engine answers): one container
//     per server, made with testcontainers-go on a private Docker network
//     created for the ensemble. testenv writes zoo.cfg and myid itself and runs
//     QuorumPeerMain in the foreground, so any image with Java and ZooKeeper
//     works. Without ZKRECIPES_IMAGE, the image is that of the ZooKeeper
//     release Config.Version or ZKRECIPES_ZK_VERSION names (Versions: 3.8.0,
//     3.9.3, 3.9.6), by default zkrecipes/zookeeper:3.8-debian (3.8.0), built
//     once from Debian's packages (see EnsureImage).
//   - processes (ZKRECIPES_BACKEND=processes, or no Docker engine): one
//     QuorumPeerMain JVM per server on free loopback ports, from Debian's
//     /usr/share/java/zookeeper.jar or $ZOOKEEPER_HOME.
//
// What clients use is Ensemble.ConnectString (or Addrs): proxied loopback
// addresses, one per server. A Link is a set of such proxies; the ensemble
// has a default link, and NewLink makes a private one for a client whose
// faults must not touch the others. DirectConnectString bypasses the proxies.
//
// Config.TLS and Config.EnforceAuth secure an ensemble: a TLS-only client
// port with keystores made by the JDK's keytool (clients use
// Ensemble.ClientTLS or Ensemble.Dialer), and digest authentication
// enforced, with a superuser for the harness (Ensemble.SuperAuth).
//
// Servers are named by their 0-based index in every method; server i has
// myid i+1. Every method is safe for concurrent use.
//
// Teardown (Close, or t.Cleanup with New) removes every container, network,
// JVM process and temporary directory the ensemble made. Resources left by a
// test binary that was killed before it could clean up are labelled with the
// owning process and removed by the next Start on the same machine (or by
// Reap).
package testenv
