package leader

import "errors"

// Sentinel errors of package leader. Errors from this package wrap one of
// these, or a recipes sentinel (recipes.ErrNilSession, recipes.ErrInvalidPath,
// recipes.ErrClosed, recipes.ErrDataTooLarge, recipes.ErrBadArgument, ...),
// or go-zookeeper's errors, or ctx's error; use errors.Is.
var (
	// ErrNoLeader: nobody campaigns under the path.
	ErrNoLeader = errors.New("leader: no leader")
	// ErrNilElection: a method was called on a nil *Election.
	ErrNilElection = errors.New("leader: nil election")
	// ErrCampaigning: Campaign on an Election that is already campaigning
	// or whose term is still live. An Election is one participant.
	ErrCampaigning = errors.New("leader: already campaigning or leading")
	// ErrResigned: Release on a term that was already released (resigned).
	ErrResigned = errors.New("leader: term already resigned")
	// ErrNoTerm: a method was called on a nil *Term.
	ErrNoTerm = errors.New("leader: no term")
	// ErrLost: Do's function returned while leadership may already have
	// been lost (the term's context was done before fn returned); the
	// error also wraps the term's cause.
	ErrLost = errors.New("leader: leadership lost")
	// ErrNilFunc: Run or Do was given a nil function.
	ErrNilFunc = errors.New("leader: nil function")
)
