package inspect

import "errors"

// Errors of the package; match with errors.Is. Each is wrapped with the
// detail (and the cause, with %w) of the failure.
var (
	// ErrBadPath reports a path that is not a valid ZooKeeper path.
	ErrBadPath = errors.New("inspect: bad path")
	// ErrUsage reports command-line arguments the command cannot run.
	ErrUsage = errors.New("inspect: usage")
	// ErrNotHeld reports a revoke of a path with no holder to revoke, or
	// of a node that is not a contender of the path's lock.
	ErrNotHeld = errors.New("inspect: nothing to revoke")
	// ErrNoPath reports a path that does not exist (show, revoke).
	ErrNoPath = errors.New("inspect: no such path")
	// ErrConnect reports a session that could not be opened; the error
	// names the servers and the cause.
	ErrConnect = errors.New("inspect: cannot connect")
	// ErrNotHolder reports a revoke of a contender that does not hold,
	// refused without -force.
	ErrNotHolder = errors.New("inspect: not a holder")
	// ErrFourLetter reports a server that did not answer "cons": it is
	// down, or the word is not in its 4lw.commands.whitelist.
	ErrFourLetter = errors.New("inspect: four-letter word refused")
)
