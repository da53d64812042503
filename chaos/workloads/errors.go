package workloads

import "errors"

// Errors returned by package workloads; match them with errors.Is.
var (
	// ErrUnknownWorkload reports a workload name that is not registered.
	ErrUnknownWorkload = errors.New("chaos: unknown workload")
	// ErrWorkerSpec reports a worker process started with a spec it
	// cannot read (see WorkerEnv).
	ErrWorkerSpec = errors.New("chaos: invalid worker spec")
)
