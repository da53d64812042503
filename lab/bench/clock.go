package bench

import "time"

var processStart = time.Now()

// fallbackNow is a process-local monotonic time.
func fallbackNow() int64 { return int64(time.Since(processStart)) }
