//go:build linux

package history

import (
	"syscall"
	"unsafe"
)

// clockMonotonic is CLOCK_MONOTONIC from <time.h>.
const clockMonotonic = 1

// Now returns CLOCK_MONOTONIC in nanoseconds. The clock is shared by every
// process on the machine (it counts from boot and never jumps), so events
// recorded by worker subprocesses order correctly against the runner's.
func Now() int64 {
	var ts syscall.Timespec
	_, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		return fallbackNow()
	}
	return ts.Nano()
}
