package persistent

import (
	"errors"
	"fmt"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// Sentinel errors of package persistent. Errors from this package wrap one
// of these, or a recipes sentinel (recipes.ErrNilSession,
// recipes.ErrInvalidPath, recipes.ErrDataTooLarge, recipes.ErrClosed, ...),
// or go-zookeeper's errors, or ctx's error (recipes.ContextError); use
// errors.Is.
var (
	// ErrNilNode: a method was called on a nil *Node.
	ErrNilNode = fmt.Errorf("persistent: nil node: %w", recipes.ErrBadArgument)
	// ErrStarted: Start on a Node that is already started.
	ErrStarted = errors.New("persistent: already started")
	// ErrNotStarted: the cause of Present before Start (or after a Start
	// that failed).
	ErrNotStarted = errors.New("persistent: not started")
	// ErrClosed: a method (Start, SetData) was called on a closed Node.
	ErrClosed = errors.New("persistent: node closed")
	// ErrTaken: a plain node's path is held by another session's node (or
	// by a persistent node). The Node waits for that node to go; Start's
	// error wraps ErrTaken with ctx's error when ctx ended while it waited.
	ErrTaken = errors.New("persistent: path held by another session")
)
