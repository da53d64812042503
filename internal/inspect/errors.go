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
	// ErrFourLetter reports a server that did not answer "cons": it is
	// down, or the word is not in its 4lw.commands.whitelist.
	ErrFourLetter = errors.New("inspect: four-letter word refused")
)
