//go:build !linux

package bench

// Now returns a monotonic time in nanoseconds. Off Linux it does not match
// the peers' clocks, so cross-process handoff times are not comparable.
func Now() int64 { return fallbackNow() }
