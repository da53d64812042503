// Package lock provides distributed mutual exclusion on ZooKeeper: Mutex
// (Curator's InterProcessMutex wire format by default, kazoo's as an
// option), Semaphore (Curator's InterProcessSemaphoreV2 wire format) and
// revocation (Curator's protocol: "__REVOKE__" written into the holder's
// node).
//
// Every holding exposes a context that is cancelled, with a cause that
// errors.Is one of the recipes sentinels (recipes.ErrSuspended,
// recipes.ErrSessionLost, recipes.ErrNodeDeleted, recipes.ErrRevoked), the
// moment it may be lost, and a fencing token; FencedMulti makes ZooKeeper
// itself reject writes once the holding is gone.
package lock
