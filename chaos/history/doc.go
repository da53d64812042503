// Package history is the record of a chaos scenario: the events every
// client observed, the recorder that collects them, and the clock that
// orders them.
//
// What it holds:
//
//   - Event and History (history.go): an event records a client operation
//     (an invoke followed by exactly one completion: ok, fail or unknown,
//     with the same Op id), a holding acquired, released or lost, a fenced
//     write accepted or rejected, a fault window and its target, what the
//     runner saw of sessions and of the ZooKeeper leader, and what a
//     workload read back once its clients stopped. Kind and Fn name them;
//     the constants here are the whole vocabulary, whoever records the
//     event. Histories are saved and loaded as JSON.
//   - Recorder, ClientLog and Op (recorder.go): collect the events of one
//     scenario; safe for concurrent use. A worker process records into a
//     recorder that streams its events to the parent (NewTeeRecorder),
//     which adds them keeping their own timestamps.
//   - Now (clock_*.go): CLOCK_MONOTONIC nanoseconds, one clock for every
//     process on the machine (it counts from boot and never jumps), so the
//     events of worker processes merge into one history.
//   - Operations and Holdings (operations.go, holdings.go): the invokes
//     joined with their completions, and the intervals during which a
//     client believed it held a key; the views the checkers and the report
//     work on.
//
// Invariants: events are stamped on one monotonic clock and a History is
// sorted by time, then by the recorder's sequence; an operation whose
// outcome is unknown may take effect at any time after its call (its
// Return is math.MaxInt64). The package imports nothing of the rest of the
// chaos suite: every other chaos package depends on it.
package history
