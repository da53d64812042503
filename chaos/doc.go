// Package chaos will hold the fault matrix that drives every recipe against
// a testenv ensemble through Toxiproxy and the container engine: scenarios,
// workloads, a history recorder, invariant checkers and the report. Nothing
// is implemented yet; cmd/zkensemble is the main job until it lands.
package chaos
