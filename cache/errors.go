package cache

import "errors"

// Sentinel errors of package cache. Errors from this package wrap them, or
// the recipes sentinels (recipes.ErrNilSession, recipes.ErrInvalidPath,
// recipes.ErrBadArgument, recipes.ErrClosed), or go-zookeeper's errors (a
// read the server refused, such as zk.ErrNoAuth), so that errors.Is reaches
// all of them.
var (
	// ErrStarted: Watch was called on a cache that had started already. A
	// cache runs once; make a new one to watch again.
	ErrStarted = errors.New("cache: already started")
)
