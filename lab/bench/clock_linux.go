//go:build linux

package bench

import (
	"syscall"
	"unsafe"
)

// clockMonotonic is CLOCK_MONOTONIC from <time.h>.
const clockMonotonic = 1

// Now returns CLOCK_MONOTONIC in nanoseconds: the clock Java's
// System.nanoTime and Python's time.monotonic_ns read on Linux, so times
// reported by peer processes compare with the harness's.
func Now() int64 {
	var ts syscall.Timespec
	_, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		return fallbackNow()
	}
	return ts.Nano()
}
