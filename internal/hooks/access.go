//go:build zkrecipes_hooks

package hooks

import "context"

// Accessors to three internals of the recipes core, for its integration tests
// in the lab module (which cannot see recipes' _test.go files). Package
// recipes sets them once, in its init; they are read-only afterwards and
// safe for concurrent use. s must be a *recipes.Session (this package
// cannot name the type: recipes imports it); anything else, nil included,
// makes them return zero values and, for FindOwn, an error.
var (
	// FindOwn runs the resolution of an ambiguous create (the listing of
	// parent, one getChildren, plus a delete per node with guid that is not
	// ours or not the first of ours) for Curator lock nodes, and returns
	// the path of our node with guid under parent, if any.
	FindOwn func(ctx context.Context, s any, parent, guid string) (path string, found bool, err error)
	// WatchStats returns the number of watches the session's registry has
	// armed (or is arming) and their subscribers. It sends nothing.
	WatchStats func(s any) (armed, subs int)
	// FanStats returns the number of watches the session's WatchSets have
	// set and not seen fire, of their watch-setting reads in flight, and
	// of open WatchSets. It sends nothing.
	FanStats func(s any) (armed, flights, sets int)
)
