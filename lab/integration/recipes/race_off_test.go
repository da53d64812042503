//go:build !race

package recipes_test

// raceEnabled: the package is tested with -race (see
// TestSetWatchesAfterReply).
const raceEnabled = false
