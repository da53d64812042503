package group

import (
	"errors"
	"fmt"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// Sentinel errors of package group. Errors from this package wrap one of
// these, or a persistent or recipes sentinel (recipes.ErrNilSession,
// recipes.ErrInvalidPath, recipes.ErrDataTooLarge, recipes.ErrBadArgument,
// recipes.ErrClosed, persistent.ErrTaken, ...), or go-zookeeper's errors,
// or ctx's error (recipes.ContextError); use errors.Is.
var (
	// ErrNilMember: a method was called on a nil *Member.
	ErrNilMember = fmt.Errorf("group: nil member: %w", recipes.ErrBadArgument)
	// ErrInvalidID: a member id that cannot be used: empty, or, in
	// Curator's layout (where it names the member's node), not a single
	// valid path segment. It also wraps recipes.ErrBadArgument or
	// recipes.ErrInvalidPath.
	ErrInvalidID = errors.New("group: invalid member id")
	// ErrLeft: Update on a Member that has left.
	ErrLeft = errors.New("group: member left")
)
