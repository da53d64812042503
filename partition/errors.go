package partition

import (
	"errors"
	"fmt"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// Sentinel errors of package partition. Errors from this package wrap one
// of these, or a recipes, group or lock sentinel (recipes.ErrNilSession,
// recipes.ErrInvalidPath, recipes.ErrBadArgument, recipes.ErrClosed,
// recipes.ErrReleased, group.ErrInvalidID, ...), or go-zookeeper's errors,
// or ctx's error (recipes.ContextError); use errors.Is.
var (
	// ErrNilPartitioner: a method was called on a nil *Partitioner.
	ErrNilPartitioner = fmt.Errorf("partition: nil partitioner: %w", recipes.ErrBadArgument)
	// ErrNilPartition: a method was called on a nil *Partition.
	ErrNilPartition = fmt.Errorf("partition: nil partition: %w", recipes.ErrBadArgument)
	// ErrInvalidItems: New was given no items, an item twice, or an item
	// that is not one valid path segment (each names its lock node's
	// parent). It also wraps recipes.ErrBadArgument or
	// recipes.ErrInvalidPath.
	ErrInvalidItems = errors.New("partition: invalid items")
	// ErrRunning: Run on a Partitioner whose stream from an earlier Run has
	// not ended: one Partitioner is one member of the group.
	ErrRunning = errors.New("partition: already running")
	// ErrBadShare: the partition function (WithFunc) returned an item that
	// is not in the set, or one twice. The stream ends with it.
	ErrBadShare = errors.New("partition: partition function returned a bad share")
	// ErrNotOwned: Fence or FencedMulti of an item that is not in the
	// Partition.
	ErrNotOwned = errors.New("partition: item not in the partition")
	// ErrRebalance is the cause of a Partition's Context when the
	// members of the group changed: the member must stop working on its
	// items and Release them, so that the set can be split again. It
	// errors.Is recipes.ErrRevoked (the member is asked to give its
	// holding up, as Curator's revocation asks a lock holder).
	ErrRebalance error = revokeError("partition: members changed: release to rebalance")
	// ErrStopped is the cause of a Partition's Context when the stream of
	// its Run ended (its ctx done, Stop, the session closed): the member
	// left the group and must Release its items. It errors.Is
	// recipes.ErrRevoked.
	ErrStopped error = revokeError("partition: partitioner stopped: release")
)

// revokeError is a cause that asks the holder of a Partition to release:
// its own message, and a kind of recipes.ErrRevoked for errors.Is.
type revokeError string

func (e revokeError) Error() string { return string(e) }
func (revokeError) Unwrap() error   { return recipes.ErrRevoked }
