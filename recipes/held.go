package recipes

import (
	"context"

	"github.com/go-zookeeper/zk"
)

// Held is the shape every holding in zkrecipes shares: the core's Holding,
// a semaphore lease (lock.Lease), a leadership term (leader.Term), a queue
// claim (queue.Claim). Code that only needs to know whether it still holds,
// to fence its writes and to give the holding up can take a Held.
//
// The lockers (lock.Mutex, rwlock.RWMutex) hold at most one holding at a
// time and spell the same methods on themselves (Context, Fence,
// FencedMulti; RContext, RFence, RFencedMulti for a read holding), with
// Unlock and RUnlock for Release, as sync.Mutex does.
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
	Release(ctx context.Context) error
}

var _ Held = (*Holding)(nil)
