package faults

// Trace is the kind of mark a fault must leave in the history to count as
// exercised (see checkers.Exercised).
type Trace string

const (
	// TraceTarget: the fault's target client went through something: a
	// suspension or a new session (history.KindSession), a lost holding, a request
	// that failed for the fault or whose outcome is unknown, a fenced write
	// rejected, or a holding it had when the fault struck that it did not
	// release itself.
	TraceTarget Trace = "target"
	// TraceDisruption: any workload client went through one of those, or
	// the ZooKeeper leader changed across the window.
	TraceDisruption Trace = "disruption"
	// TraceTraffic: a workload client completed something during the
	// window (slow links need not disrupt; they must carry traffic), or
	// went through one of the disruptions above (a link slow enough to
	// suspend a client was not idle either).
	TraceTraffic Trace = "traffic"
)
