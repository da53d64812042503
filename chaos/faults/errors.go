package faults

import "errors"

// Errors returned by package faults; match them with errors.Is.
var (
	// ErrUnknownFault reports a fault name that is not in the catalogue.
	ErrUnknownFault = errors.New("chaos: unknown fault")
	// ErrUnsupported reports a fault the workload cannot take (for example
	// freezing a client process when the workload runs in-process).
	ErrUnsupported = errors.New("chaos: fault not supported by this workload")
	// ErrHeal reports that the ensemble could not be brought back to a
	// serving quorum after a fault.
	ErrHeal = errors.New("chaos: cannot heal the ensemble")
	// ErrSchedule reports schedule parameters that cannot describe a run:
	// no fault, a session timeout that is not positive, an unknown tier.
	ErrSchedule = errors.New("chaos: invalid schedule")
)
