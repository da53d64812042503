//go:build zkrecipes_hooks

// Package hooks holds test hooks of the recipes core, so that the
// integration tests in the lab module (lab/integration/lock, .../rwlock,
// .../barrier, .../partition), which cannot reach the packages' _test.go
// files, can inject a real fault at a precise point of an acquisition, of
// a double barrier's Leave or of a partitioner's allocation. It also holds
// two mutant switches of package cache, a seam removing one term from the
// lease's bound (SetLeaseDrop) and one its renewals' freeze cap
// (SetLeaseStallDrop), and three read-only accessors to the core's
// internals (access.go).
//
// The hooks exist only in a build with the tag zkrecipes_hooks (the
// project's test commands set it: scripts/test.sh, scripts/main.sh).
// Without it (every service's build) the calls in the recipes are empty
// functions the compiler removes, the setters panic, and Enabled is
// false, so a test that needs a hook skips itself (testutil.RequireHooks).
package hooks

import (
	"context"
	"sync/atomic"
)

// Enabled reports whether this build has the hooks (tag zkrecipes_hooks).
const Enabled = true

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

var beforeWrite atomic.Pointer[func(path string)]

// SetBeforeWrite sets f to be called by package shared between the read
// and the compare-and-set write of each optimistic attempt on the node at
// path, so a test can put a competing write there. It returns a function
// restoring the previous hook. Not for concurrent tests.
func SetBeforeWrite(f func(path string)) (restore func()) {
	old := beforeWrite.Swap(&f)
	return func() { beforeWrite.Store(old) }
}

// BeforeWrite calls the hook set by SetBeforeWrite, if any.
func BeforeWrite(path string) {
	if f := beforeWrite.Load(); f != nil && *f != nil {
		(*f)(path)
	}
}

var beforeReadyDelete atomic.Pointer[func(path string)]

// SetBeforeReadyDelete sets f to be called by package barrier when a
// double barrier's Leave has seen every member gone and is about to delete
// the ready node at path (between the listing that showed no member and
// the requests that delete it), so that a test can run a next round
// there. f runs on the leaving goroutine and may block. It returns a
// function restoring the previous hook. Not for concurrent tests.
func SetBeforeReadyDelete(f func(path string)) (restore func()) {
	old := beforeReadyDelete.Swap(&f)
	return func() { beforeReadyDelete.Store(old) }
}

// BeforeReadyDelete calls the hook set by SetBeforeReadyDelete, if any.
func BeforeReadyDelete(path string) {
	if f := beforeReadyDelete.Load(); f != nil && *f != nil {
		(*f)(path)
	}
}

var afterShareTaken atomic.Pointer[func(ctx context.Context, path string)]

// SetAfterShareTaken sets f to be called by package partition when a
// Partitioner of path has taken every lock of its share and is about to
// hand the locks to its allocation loop, which decides whether the share
// is still the group's. ctx is the allocation's context: the loop cancels
// it once it has seen the members change, so a test can wait for that
// before f returns. f runs on the goroutine taking the locks and may
// block. It returns a function restoring the previous hook. Not for
// concurrent tests.
func SetAfterShareTaken(f func(ctx context.Context, path string)) (restore func()) {
	old := afterShareTaken.Swap(&f)
	return func() { afterShareTaken.Store(old) }
}

// AfterShareTaken calls the hook set by SetAfterShareTaken, if any.
func AfterShareTaken(ctx context.Context, path string) {
	if f := afterShareTaken.Load(); f != nil && *f != nil {
		(*f)(ctx, path)
	}
}

var cacheSkipReread atomic.Bool

// SetCacheSkipReread makes package cache skip what it reads again after a
// reconnection (the reads that failed with the connection, and every
// cached node and listing): the mutant that the cache tests and the chaos
// suite must catch. It returns a function restoring the previous setting.
// Not for concurrent tests.
func SetCacheSkipReread(skip bool) (restore func()) {
	old := cacheSkipReread.Swap(skip)
	return func() { cacheSkipReread.Store(old) }
}

// CacheSkipReread reports whether SetCacheSkipReread is in effect.
func CacheSkipReread() bool { return cacheSkipReread.Load() }

var cacheCompareVersion atomic.Bool

// SetCacheCompareVersion makes package cache take a node's read for
// "nothing new" when its version equals the cached one's, unless it saw
// the node's deletion event: the mutant of Curator's CURATOR-391 (a node
// deleted and created again while the cache was cut off is back at the
// same version, and the cache keeps the old incarnation), which the cache
// tests and the chaos suite must catch. It returns a function restoring
// the previous setting. Not for concurrent tests.
func SetCacheCompareVersion(on bool) (restore func()) {
	old := cacheCompareVersion.Swap(on)
	return func() { cacheCompareVersion.Store(old) }
}

// CacheCompareVersion reports whether SetCacheCompareVersion is in effect.
func CacheCompareVersion() bool { return cacheCompareVersion.Load() }

// leaseDrop holds the lease terms SetLeaseDrop removes: bit 0 Q, bit 1 P,
// bit 2 R.
var leaseDrop atomic.Int32

// SetLeaseDrop makes every Session whose timeout is negotiated while it is
// in effect leave Q (the leader's ping period, tickTime/2), P (the
// Session's ping period) and R (the leader's retransmission allowance,
// recipes.WithQuorumRetransmit), each as its argument says, out of its
// lease's lag, so the holding lasts that much longer (LeaseBudget.Lag and
// Hold; the ping period itself is unchanged). The boundary tests of the
// lease use it to show each term is needed (lab/integration/recipes,
// leaseterms_test.go). It returns a function restoring the previous
// setting. Not for concurrent tests.
func SetLeaseDrop(q, p, r bool) (restore func()) {
	var v int32
	if q {
		v |= 1
	}
	if p {
		v |= 2
	}
	if r {
		v |= 4
	}
	old := leaseDrop.Swap(v)
	return func() { leaseDrop.Store(old) }
}

// leaseStallDrop is SetLeaseStallDrop's setting.
var leaseStallDrop atomic.Bool

// SetLeaseStallDrop makes every Session whose connection handshakes while
// it is in effect renew its lease from each reply's send time alone,
// without recipes.LeaseBudget.Stall's cap, so a server's answers after a
// freeze renew it as if they were fresh. The lease's freeze boundary test
// uses it to show the cap is needed. It returns a function restoring the
// previous setting. Not for concurrent tests.
func SetLeaseStallDrop(drop bool) (restore func()) {
	old := leaseStallDrop.Swap(drop)
	return func() { leaseStallDrop.Store(old) }
}

// LeaseStallDrop reports whether SetLeaseStallDrop is in effect.
func LeaseStallDrop() bool { return leaseStallDrop.Load() }

// LeaseDrop reports the terms SetLeaseDrop removes from the lease's lag.
func LeaseDrop() (q, p, r bool) {
	v := leaseDrop.Load()
	return v&1 != 0, v&2 != 0, v&4 != 0
}
