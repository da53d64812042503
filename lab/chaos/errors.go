package chaos

import "errors"

// Errors returned by package chaos; match them with errors.Is.
var (
	// ErrConfig reports a Config or flag value that cannot describe a run.
	ErrConfig = errors.New("chaos: invalid config")
	// ErrUnknownFault reports a fault name that is not in the catalogue.
	ErrUnknownFault = errors.New("chaos: unknown fault")
	// ErrUnknownWorkload reports a workload name that is not registered.
	ErrUnknownWorkload = errors.New("chaos: unknown workload")
	// ErrNoScenarios reports a scenario filter that matched nothing.
	ErrNoScenarios = errors.New("chaos: no scenario matches")
	// ErrUnsupported reports a fault the workload cannot take (for example
	// freezing a client process when the workload runs in-process).
	ErrUnsupported = errors.New("chaos: fault not supported by this workload")
	// ErrHistory reports a history that cannot be read.
	ErrHistory = errors.New("chaos: malformed history")
	// ErrHeal reports that the ensemble could not be brought back to a
	// serving quorum after a fault.
	ErrHeal = errors.New("chaos: cannot heal the ensemble")
	// ErrViolation reports that at least one invariant was violated.
	ErrViolation = errors.New("chaos: invariant violated")
)
