package workloads

import "errors"

// Errors returned by package workloads; match them with errors.Is.
var (
	// ErrUnknownWorkload reports a workload name that is not registered.
	ErrUnknownWorkload = errors.New("chaos: unknown workload")
	// ErrWorkerSpec reports a worker process started with a spec it
	// cannot read (see WorkerEnv).
	ErrWorkerSpec = errors.New("chaos: invalid worker spec")
	// ErrNeedsHooks: a mutant that switches a recipe's test hook (the
	// cache's skipped re-read) ran in a build without them; build the
	// runner with -tags zkrecipes_hooks (scripts/main.sh and test.sh do).
	ErrNeedsHooks = errors.New("chaos: this mutant needs a build with -tags zkrecipes_hooks")
)
