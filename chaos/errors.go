package chaos

import "errors"

// Errors returned by package chaos; match them with errors.Is.
var (
	// ErrConfig reports a Config or flag value that cannot describe a run.
	ErrConfig = errors.New("chaos: invalid config")
	// ErrNoScenarios reports a scenario filter that matched nothing.
	ErrNoScenarios = errors.New("chaos: no scenario matches")
	// ErrRootInUse reports a root (Config.Root) that already has nodes
	// under it when the run starts.
	ErrRootInUse = errors.New("chaos: root already in use")
	// ErrViolation reports that at least one invariant was violated.
	ErrViolation = errors.New("chaos: invariant violated")
)
