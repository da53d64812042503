//go:build !linux

package history

// Now returns a monotonic time in nanoseconds. Outside Linux it is only
// monotonic within this process, so worker subprocesses are not supported.
func Now() int64 { return fallbackNow() }
