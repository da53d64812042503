package chaos

// Workloads returns the workloads of the matrix, one per recipe (and the
// raw-ZooKeeper register). The recipes after lock take a deterministic
// subset of the faults in the quick tier (QuickFaults, chosen so that
// together they cover every in-process fault) and every fault in the full
// tier. LockProc runs its clients in
// worker processes: the binary must call RunWorkerIfAsked first thing in
// main (or TestMain). The deliberately broken
// variants are not part of it; tests and zkchaos -broken add them.
func Workloads() []Workload {
	return []Workload{&Register{}, &Lock{}, &LockProc{}, &Leader{}, &RWLock{}, &Semaphore{}, &Queue{}, &Barrier{}, &TwoPhase{}}
}

// quickFaults is the quick tier's faults of each recipe workload after
// lock. The first of each is its representative fault, the one the
// package's end-to-end test runs (see QuickFaults).
var quickFaults = map[string][]string{
	"leader":    {"kill-leader", "partition-expire", "isolate-leader", "half-open"},
	"rwlock":    {"partition-expire", "latency-near", "slicer", "lose-quorum"},
	"semaphore": {"cut-short", "kill-follower", "limit-data", "slow-close"},
	"queue":     {"half-open", "kill-follower", "bandwidth", "latency-low"},
	"barrier":   {"pause-server", "cut-short", "kill-leader", "lose-quorum"},
	"twophase":  {"partition-expire", "kill-leader", "half-open", "pause-server"},
}

// QuickFaults names the leader workload's quick-tier faults.
func (w *Leader) QuickFaults() []string { return quickFaults[w.Name()] }

// QuickFaults names the rwlock workload's quick-tier faults.
func (w *RWLock) QuickFaults() []string { return quickFaults[w.Name()] }

// QuickFaults names the semaphore workload's quick-tier faults.
func (w *Semaphore) QuickFaults() []string { return quickFaults[w.Name()] }

// QuickFaults names the queue workload's quick-tier faults.
func (w *Queue) QuickFaults() []string { return quickFaults[w.Name()] }

// QuickFaults names the barrier workload's quick-tier faults.
func (w *Barrier) QuickFaults() []string { return quickFaults[w.Name()] }

// QuickFaults names the twophase workload's quick-tier faults.
func (w *TwoPhase) QuickFaults() []string { return quickFaults[w.Name()] }

// Representative returns, for the test suite, one scenario name per
// workload that takes a subset of faults in the quick tier: the workload
// under its first quick fault ("leader/kill-leader"); other workloads
// are not listed.
func Representative(workloads ...Workload) []string {
	var out []string
	for _, w := range workloads {
		if qf, ok := w.(QuickFaulter); ok && len(qf.QuickFaults()) > 0 {
			out = append(out, w.Name()+"/"+qf.QuickFaults()[0])
		}
	}
	return out
}

// BrokenWorkloads returns workloads that must fail their checks: proof that
// the suite catches a broken client or recipe.
func BrokenWorkloads() []Workload {
	return []Workload{&Register{Broken: true}, &Lock{Broken: true}}
}
