// Package hooks holds test hooks of the recipes core, so that the
// integration tests in the lab module (lab/integration/lock, .../rwlock),
// which cannot reach recipes' _test.go files, can inject a real fault at a
// precise point of an acquisition, and two read-only accessors to its
// internals (access.go). Production code never sets a hook; an unset hook
// costs one atomic load.
package hooks

import "sync/atomic"

var beforeHold atomic.Pointer[func(path string)]

// SetBeforeHold sets f to be called by the recipes core each time it has
// decided that the node at path holds (the listing, or our node's stat,
// proved it) and is about to build the holding. f runs on the acquiring
// goroutine and may block. It returns a function restoring the previous
// hook. Not for concurrent tests.
func SetBeforeHold(f func(path string)) (restore func()) {
	old := beforeHold.Swap(&f)
	return func() { beforeHold.Store(old) }
}

// BeforeHold calls the hook set by SetBeforeHold, if any.
func BeforeHold(path string) {
	if f := beforeHold.Load(); f != nil && *f != nil {
		(*f)(path)
	}
}
