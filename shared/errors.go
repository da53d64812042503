package shared

import (
	"errors"
	"fmt"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// Sentinel errors of package shared. Errors from this package wrap them, or
// the recipes sentinels (recipes.ErrInvalidPath, recipes.ErrNilSession,
// recipes.ErrDataTooLarge, recipes.ErrClosed, recipes.ErrFenced, ...), or
// go-zookeeper's errors, so that errors.Is reaches all of them.
var (
	// ErrUncertain: the connection failed while a write was in flight, so
	// it may or may not have been applied (ZooKeeper may still apply it
	// after the error). Read the value again to learn where it stands.
	ErrUncertain = errors.New("shared: outcome unknown after connection loss")
	// ErrCorrupt: a Count's node holds data that is not 4 bytes long.
	ErrCorrupt = errors.New("shared: node data is not a count")
	// ErrOverflow: a Long's Add (Increment, Decrement) whose sum does not
	// fit in an int64; nothing was written. The error also wraps
	// recipes.ErrBadArgument.
	ErrOverflow = errors.New("shared: long overflow")
	// ErrNilReceiver: a method was called on a nil *Value, *Count or *Long.
	ErrNilReceiver = fmt.Errorf("shared: nil receiver: %w", recipes.ErrBadArgument)
)
