// Package interop proves zkrecipes' wire compatibility against the real
// libraries: its tests put Go recipes and Apache Curator (Java) or kazoo
// (Python) peers — small programs in internal/peers, built and run by the
// tests — on the same paths of a real ensemble, and check the invariants
// across both sides. It has no code of its own beyond the tests.
//
// A test skips, saying what to install, only when Java, javac, Curator,
// Python or kazoo is missing; the README's test command installs them, so
// CI never skips.
package interop
