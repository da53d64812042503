package recipes

import (
	"context"

	"github.com/go-zookeeper/zk"
)

// Held is the shape every holding in zkrecipes shares: the core's Holding,
// a semaphore permit (lock.Permit), a leadership term (leader.Term), a queue
// claim (queue.Claim). Code that only needs to know whether it still holds,
// to fence its writes and to give the holding up can take a Held.
//
// The lockers (lock.Mutex, rwlock.RWMutex) hold at most one holding at a
// time and spell the same methods on themselves (Context, Fence,
// FencedMulti; the same on an rwlock.RWMutex's Reader() for a read
// holding), with Unlock for Release, as sync.Mutex does.
type Held interface {
	// Context is done the moment the holding may be lost; context.Cause
	// says why, with an error that errors.Is one of ErrSuspended
	// (ErrLeaseExpired also matches it), ErrSessionLost (ErrClosed also
	// matches it), ErrNodeDeleted, ErrRevoked or ErrReleased. A holder
	// checks it before each action.
	Context() context.Context
	// Fence returns the holding's fencing token: the czxid of its node,
	// which only grows from holder to holder.
	Fence() Fence
	// FencedMulti runs ops in one multi together with a version check of
	// the holding's node, so that ZooKeeper itself rejects them (an error
	// wrapping ErrFenced) once the node is gone or was written by someone
	// else. Cost: 1 multi.
	FencedMulti(ctx context.Context, ops ...any) ([]zk.MultiResponse, error)
	// Release gives the holding up: Context is cancelled (cause
	// ErrReleased) before the node is deleted, so the holder stops before
	// anyone else can hold.
	//
	// Release returns nil only when it ended a holding that was still
	// live (Context not done). Every holding type, and Unlock
	// of the lockers, answers the other cases the same way, with an error
	// that errors.Is ErrReleased:
	//
	//   - released before (Release, Unlock, a queue claim's Ack), or never
	//     held (Unlock without a holding): nothing is sent;
	//   - lost before (Context already done with another cause): the
	//     error also wraps that cause (ErrSessionLost, ErrNodeDeleted,
	//     ErrSuspended, ...). Release still gives up what may be left: our
	//     node is deleted if it may still exist under our live session
	//     (after ErrSuspended, ErrLeaseExpired or ErrRevoked, as for a live
	//     holding), and nothing is sent when the session is gone, the node
	//     was deleted by someone else, or the holding already gave its node
	//     up by itself (a leader.Term ended by loss).
	//
	// A package's own sentinel for these cases (lock.ErrNotHeld,
	// leader.ErrResigned, queue.ErrClaimLost) may be wrapped too.
	Release(ctx context.Context) error
}

var _ Held = (*Holding)(nil)
