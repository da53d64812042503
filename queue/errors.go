package queue

import (
	"errors"
	"fmt"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// Sentinel errors of package queue. Errors from this package wrap them, or
// the recipes sentinels (recipes.ErrInvalidPath, recipes.ErrNilSession,
// recipes.ErrDataTooLarge, recipes.ErrClosed, ...), or go-zookeeper's
// errors, so that errors.Is reaches all of them.
var (
	// ErrEmpty: Poll or Peek found no item.
	ErrEmpty = errors.New("queue: empty")
	// ErrFull: a Put on a queue made WithMaxItems found it full; nothing
	// was added.
	ErrFull = errors.New("queue: full")
	// ErrNilReceiver: a method was called on a nil *Queue or *Claim.
	ErrNilReceiver = fmt.Errorf("queue: nil receiver: %w", recipes.ErrBadArgument)
	// ErrPriority: a priority outside MinPriority..MaxPriority, or a
	// priority given to a queue made without WithPriority.
	ErrPriority = errors.New("queue: bad priority")
	// ErrUncertain: the connection was lost while a write was in flight and
	// its outcome could not be learned. For Put and PutAll the items may or
	// may not be in the queue. For Take the item is returned with this
	// error: our delete may have been applied, or another consumer took the
	// item too (it is never lost, but may be delivered twice). For Ack our
	// multi may have removed the item, and the item is gone: we or a
	// consumer that claimed it after our session died removed it; Ack again
	// to learn more while the session lives.
	ErrUncertain = errors.New("queue: outcome unknown after connection loss")
	// ErrClaimLost: Ack or Release on a claim that is no longer ours (its
	// session died, its claim node was deleted or replaced, or it was
	// released); the item was not removed by us and is, or will be,
	// delivered to another consumer. A claim's Context is cancelled with it
	// (and recipes.ErrNodeDeleted) when its claim node is deleted. Release
	// wraps it together with recipes.ErrReleased (see recipes.Held).
	ErrClaimLost = errors.New("queue: claim lost")
)
