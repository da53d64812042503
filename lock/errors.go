package lock

import "errors"

// Sentinel errors of package lock. Errors from this package wrap them, or
// the recipes sentinels (recipes.ErrInvalidPath, recipes.ErrNilSession,
// recipes.ErrClosed, ...), or go-zookeeper's errors; use errors.Is.
var (
	// ErrLocked: TryLock found the mutex held or contended.
	ErrLocked = errors.New("lock: locked")
	// ErrNotHeld: Unlock (or a holder-only call) on a Mutex that holds
	// nothing.
	ErrNotHeld = errors.New("lock: not held")
	// ErrAlreadyHeld: Lock or TryLock on a Mutex that holds, or is
	// acquiring, the lock. A Mutex is not reentrant.
	ErrAlreadyHeld = errors.New("lock: already held by this Mutex")
	// ErrNilMutex: a method was called on a nil *Mutex, *Semaphore or *Lease.
	ErrNilMutex = errors.New("lock: nil receiver")
	// ErrLeases: NewSemaphore was asked for fewer than 1 lease. The error
	// also wraps recipes.ErrBadArgument.
	ErrLeases = errors.New("lock: semaphore needs at least 1 lease")
	// ErrDialect: the dialect has no names for the recipe: kazoo has no
	// semaphore in Curator's layout, so NewSemaphore accepts Curator's
	// dialect only (rwlock.New, a dialect without read and write names).
	// The error also wraps recipes.ErrBadArgument.
	ErrDialect = errors.New("lock: dialect not supported")
)
