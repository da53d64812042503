//go:build !zkrecipes_hooks

package hooks

import "context"

// Enabled reports whether this build has the hooks (tag zkrecipes_hooks).
const Enabled = false

const offMsg = "hooks: test hooks need a build with -tags zkrecipes_hooks"

// BeforeHold, BeforeWrite, BeforeReadyDelete, AfterShareTaken: nothing
// without the tag.
func BeforeHold(string)                       {}
func BeforeWrite(string)                      {}
func BeforeReadyDelete(string)                {}
func AfterShareTaken(context.Context, string) {}

// CacheSkipReread, CacheCompareVersion: never without the tag.
func CacheSkipReread() bool     { return false }
func CacheCompareVersion() bool { return false }

// LeaseStallDrop: the cap always applies without the tag.
func LeaseStallDrop() bool { return false }

// LeaseDrop: no term is dropped without the tag.
func LeaseDrop() (q, p, r bool) { return false, false, false }

// The setters panic without the tag: a test that needs them must skip
// first when Enabled is false.
func SetBeforeHold(func(string)) func()                       { panic(offMsg) }
func SetBeforeWrite(func(string)) func()                      { panic(offMsg) }
func SetBeforeReadyDelete(func(string)) func()                { panic(offMsg) }
func SetAfterShareTaken(func(context.Context, string)) func() { panic(offMsg) }
func SetCacheSkipReread(bool) func()                          { panic(offMsg) }
func SetCacheCompareVersion(bool) func()                      { panic(offMsg) }
func SetLeaseDrop(q, p, r bool) func()                        { panic(offMsg) }
func SetLeaseStallDrop(bool) func()                           { panic(offMsg) }

// The accessors are nil without the tag (package recipes sets them only
// in a build with it).
var (
	FindOwn    func(ctx context.Context, s any, parent, guid string) (path string, found bool, err error)
	WatchStats func(s any) (armed, subs int)
	FanStats   func(s any) (armed, flights, sets int)
)
