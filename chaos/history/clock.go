package history

import "time"

// processStart anchors fallbackNow.
var processStart = time.Now()

// fallbackNow is monotonic within this process only: nanoseconds since the
// package was loaded. It is used where CLOCK_MONOTONIC cannot be read.
func fallbackNow() int64 { return int64(time.Since(processStart)) }

// ClockName names the clock of Now, saved with every history.
const ClockName = "CLOCK_MONOTONIC"
