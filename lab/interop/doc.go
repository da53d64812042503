// Package interop proves zkrecipes' wire compatibility against the real
// libraries: its tests put Go recipes and Apache Curator (Java) or kazoo
// (Python) peers — small programs in internal/peers, built and run by the
// tests — on the same paths of a real ensemble, and check the invariants
// across both sides. It has no code of its own beyond the tests.
//
// Every test runs once per peer release (peers.Releases), as subtests named
// after it: debian12 (Curator 5.4, kazoo 2.8, installed on this machine) and
// testing (Curator 5.7.1, kazoo 2.11.0, in a container of an image built
// from Debian testing's packages, built by the first test that needs it when
// missing). ZKRECIPES_PEERS=debian12 or testing runs one release only;
// ZKRECIPES_ZK_VERSION picks the servers' release (testenv).
//
// A test skips, saying what to install, only when Java, javac, Curator,
// Python or kazoo is missing on this machine; the README's test command
// installs them, so CI never skips.
package interop
