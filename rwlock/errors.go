package rwlock

import (
	"errors"

	"github.com/zkrecipes/zkrecipes/lock"
)

// Sentinel errors of package rwlock. Errors from this package wrap them, or
// the recipes sentinels (recipes.ErrInvalidPath, recipes.ErrNilSession,
// recipes.ErrClosed, recipes.ErrDataTooLarge, ...), or go-zookeeper's
// errors; use errors.Is. ErrLocked, ErrNotHeld, ErrAlreadyHeld and
// ErrNilReceiver are the very values of package lock, so errors.Is(err,
// lock.ErrLocked) and errors.Is(err, rwlock.ErrLocked) agree.
var (
	// ErrLocked: TryLock found the lock held or contended, or Reader().TryLock found
	// a writer holding or queued.
	ErrLocked = lock.ErrLocked
	// ErrNotHeld: Unlock without the write holding, or Reader().Unlock without the
	// read holding. It errors.Is recipes.ErrReleased (see recipes.Held).
	ErrNotHeld = lock.ErrNotHeld
	// ErrAlreadyHeld: Lock while this RWMutex holds the write lock, Reader().Lock
	// while it holds the read lock, or any acquisition while another
	// acquisition on the same RWMutex is in progress. An RWMutex is not
	// reentrant.
	ErrAlreadyHeld = lock.ErrAlreadyHeld
	// ErrNilReceiver: a method was called on a nil *RWMutex.
	ErrNilReceiver = lock.ErrNilReceiver
	// ErrUpgrade: Lock or TryLock while this RWMutex holds only the read
	// lock. Waiting would deadlock (our own read node is ahead of the write
	// node we would queue); release the read lock first.
	ErrUpgrade = errors.New("rwlock: cannot upgrade a read holding to write")
)
