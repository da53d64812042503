//go:build !race

package chaos

// raceEnabled: the package is tested with -race (see skipUnderRace).
const raceEnabled = false
