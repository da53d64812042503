package barrier

import (
	"errors"
	"fmt"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// Sentinel errors of package barrier. Errors from this package wrap them, or
// the recipes sentinels (recipes.ErrInvalidPath, recipes.ErrNilSession,
// recipes.ErrBadArgument, recipes.ErrClosed, recipes.ErrSessionLost, ...),
// or go-zookeeper's errors, so that errors.Is reaches all of them.
var (
	// ErrNilReceiver: a method was called on a nil *Barrier or *DoubleBarrier.
	ErrNilReceiver = fmt.Errorf("barrier: nil receiver: %w", recipes.ErrBadArgument)
	// ErrMembers: NewDouble was asked for fewer than 1 member. The error
	// also wraps recipes.ErrBadArgument.
	ErrMembers = errors.New("barrier: double barrier needs at least 1 member")
	// ErrNotEntered: Leave on a DoubleBarrier that has not entered.
	ErrNotEntered = errors.New("barrier: not entered")
	// ErrAlreadyEntered: Enter on a DoubleBarrier that has entered (or is
	// entering) and not left yet.
	ErrAlreadyEntered = errors.New("barrier: already entered")
	// ErrMemberLost: our member node vanished because our session died; the
	// other members no longer count or wait for us. Also wraps
	// recipes.ErrSessionLost.
	ErrMemberLost = errors.New("barrier: member lost with its session")
)
