package leader

import (
	"errors"
	"fmt"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// Sentinel errors of package leader. Errors from this package wrap one of
// these, or a recipes sentinel (recipes.ErrNilSession, recipes.ErrInvalidPath,
// recipes.ErrClosed, recipes.ErrDataTooLarge, recipes.ErrBadArgument, ...),
// or go-zookeeper's errors, or ctx's error; use errors.Is.
var (
	// ErrNoLeader: nobody campaigns under the path.
	ErrNoLeader = errors.New("leader: no leader")
	// ErrNilReceiver: a method was called on a nil *Election or *Term (a
	// nil Term's Context is cancelled with it).
	ErrNilReceiver = fmt.Errorf("leader: nil receiver: %w", recipes.ErrBadArgument)
	// ErrCampaigning: Campaign on an Election that is already campaigning
	// or whose term is still live. An Election is one participant.
	ErrCampaigning = errors.New("leader: already campaigning or leading")
	// ErrResigned: Release on a term that was already released (resigned).
	// It errors.Is recipes.ErrReleased: a second Release answers as it
	// does for every holding (see recipes.Held).
	ErrResigned error = resignedError{}
	// ErrLost: Do's function returned while leadership may already have
	// been lost (the term's context was done before fn returned); the
	// error also wraps the term's cause.
	ErrLost = errors.New("leader: leadership lost")
	// ErrNilFunc: Run or Do was given a nil function.
	ErrNilFunc = errors.New("leader: nil function")
)

// resignedError is ErrResigned: its own message, and a kind of
// recipes.ErrReleased for errors.Is.
type resignedError struct{}

func (resignedError) Error() string { return "leader: term already resigned" }
func (resignedError) Unwrap() error { return recipes.ErrReleased }
