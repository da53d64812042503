package lock

import (
	"errors"
	"fmt"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// Sentinel errors of package lock. Errors from this package wrap them, or
// the recipes sentinels (recipes.ErrInvalidPath, recipes.ErrNilSession,
// recipes.ErrClosed, ...), or go-zookeeper's errors; use errors.Is.
var (
	// ErrLocked: TryLock found the mutex held or contended.
	ErrLocked = errors.New("lock: locked")
	// ErrNotHeld: Unlock (or a holder-only call) on a Mutex that holds
	// nothing, or Release of a Permit already released. It errors.Is
	// recipes.ErrReleased: releasing what is not held answers as releasing
	// twice does for every holding (see recipes.Held).
	ErrNotHeld error = notHeldError{}
	// ErrAlreadyHeld: Lock or TryLock on a Mutex that holds, or is
	// acquiring, the lock. A Mutex is not reentrant.
	ErrAlreadyHeld = errors.New("lock: already held by this Mutex")
	// ErrNilReceiver: a method was called on a nil *Mutex, *Semaphore or *Permit.
	ErrNilReceiver = fmt.Errorf("lock: nil receiver: %w", recipes.ErrBadArgument)
	// ErrPermits: a number of permits out of range: NewSemaphore was asked
	// for fewer than 1 permit, or AcquireN (TryAcquireN) for fewer than 1 or
	// more than a fixed maximum, more than math.MaxInt32, or (count-based,
	// more than 1) more than the count it read. The error also wraps
	// recipes.ErrBadArgument.
	ErrPermits = errors.New("lock: number of permits out of range")
	// ErrNoPermit: TryAcquire (TryAcquireN) found no permit free, or another
	// acquirer ahead of it. The error also wraps recipes.ErrWouldBlock.
	ErrNoPermit = errors.New("lock: no permit free")
	// ErrMaxMismatch: a Semaphore's fixed maximum differs from the one
	// recorded at its path while permits are held under that one: the peers
	// disagree on n (see Semaphore). Nothing was acquired; the error
	// also wraps recipes.ErrBadArgument.
	ErrMaxMismatch = errors.New("lock: semaphore maximum differs from the recorded one")
	// ErrBadCount: the node a count-based Semaphore takes its maximum from
	// does not hold a count (4 bytes, big endian).
	ErrBadCount = errors.New("lock: semaphore count node does not hold a count")
	// ErrDialect: the dialect has no names for the recipe: kazoo has no
	// semaphore in Curator's layout, so NewSemaphore accepts Curator's
	// dialect only (rwlock.New, a dialect without read and write names).
	// The error also wraps recipes.ErrBadArgument.
	ErrDialect = errors.New("lock: dialect not supported")
)

// notHeldError is ErrNotHeld: its own message, and a kind of
// recipes.ErrReleased for errors.Is.
type notHeldError struct{}

func (notHeldError) Error() string { return "lock: not held" }
func (notHeldError) Unwrap() error { return recipes.ErrReleased }
