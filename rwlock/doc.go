// Package rwlock will hold RWMutex, the shared read / exclusive write lock of
// ZooKeeper's recipes on the recipes core, wire-compatible with Curator's
// InterProcessReadWriteLock, with write-to-read downgrade and revocation.
// Nothing is implemented yet.
package rwlock
