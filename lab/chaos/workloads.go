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
// the suite catches a broken client or recipe. register-broken and
// lock-broken fail with or without a fault; the mutants of MutantCases fail
// only under the faults that expose them (their QuickFaults, the only
// scenarios the matrix gives them).
func BrokenWorkloads() []Workload {
	out := []Workload{&Register{Broken: true}, &Lock{Broken: true}}
	for _, mc := range MutantCases() {
		out = append(out, mc.Mutant)
	}
	return out
}

// MutantCase is a mutant (a recipe's behaviour with one safety step
// removed), its twin (the same workload with the step), the faults that
// expose the mutant, and the checkers of which at least one must find a
// violation in each of the mutant's scenarios. The twin must pass the same
// scenarios. Mild names faults that do not expose the mutant: under them the
// mutant must pass (proof that the fault, not the workload alone, exposes
// it).
type MutantCase struct {
	Mutant, Twin Workload
	Faults       []string
	Catch        []string
	Mild         []string
}

// Scenarios names the mutant's scenarios and the twin's, in the order of
// Faults.
func (mc MutantCase) Scenarios() (mutant, twin []string) {
	for _, f := range mc.Faults {
		mutant = append(mutant, mc.Mutant.Name()+"/"+f)
		twin = append(twin, mc.Twin.Name()+"/"+f)
	}
	return mutant, twin
}

// mutantFaults is the faults of each mutant workload and of its twin.
var mutantFaults = map[string][]string{
	"lock-stepdown":    {"partition-expire"},
	"fence":            {"freeze-client"},
	"rwlock-stale":     {"latency-low"},
	"twophase-timeout": {"partition-expire"},
	"queue-bypath":     {"half-open"},
	"leader-owner":     {"partition-expire"},
}

// MutantCases returns every mutant with its twin, faults and checkers.
func MutantCases() []MutantCase {
	cs := []MutantCase{
		{Mutant: &LockStepDown{Mutant: true}, Twin: &LockStepDown{}, Catch: []string{"mutual-exclusion"}, Mild: []string{"cut-short"}},
		{Mutant: &Fence{Mutant: true}, Twin: &Fence{}, Catch: []string{"fencing"}, Mild: []string{"cut-short"}},
		{Mutant: &RWLockStale{Mutant: true}, Twin: &RWLockStale{}, Catch: []string{"writer-exclusive"}},
		{Mutant: &TwoPhaseTimeout{Mutant: true}, Twin: &TwoPhaseTimeout{}, Catch: []string{"two-phase-commit"}, Mild: []string{"latency-low"}},
		{Mutant: &QueueByPath{Mutant: true}, Twin: &QueueByPath{}, Catch: []string{"queue-delivery"}, Mild: []string{"latency-low"}},
		{Mutant: &LeaderOwner{Mutant: true}, Twin: &LeaderOwner{}, Catch: []string{"single-leader"}, Mild: []string{"cut-short"}},
	}
	for i := range cs {
		cs[i].Faults = mutantFaults[cs[i].Twin.Name()]
	}
	return cs
}

// QuickFaults names the faults that expose the lock-stepdown mutant.
func (w *LockStepDown) QuickFaults() []string { return mutantFaults["lock-stepdown"] }

// QuickFaults names the faults that expose the fence mutant.
func (w *Fence) QuickFaults() []string { return mutantFaults["fence"] }

// QuickFaults names the scenario's fault of the rwlock-stale mutant (a
// foreign client, not the fault, exposes it).
func (w *RWLockStale) QuickFaults() []string { return mutantFaults["rwlock-stale"] }

// QuickFaults names the faults that expose the two-phase timeout mutant.
func (w *TwoPhaseTimeout) QuickFaults() []string { return mutantFaults["twophase-timeout"] }

// QuickFaults names the faults that expose the queue by-path mutant.
func (w *QueueByPath) QuickFaults() []string { return mutantFaults["queue-bypath"] }

// QuickFaults names the faults that expose the leader owner mutant.
func (w *LeaderOwner) QuickFaults() []string { return mutantFaults["leader-owner"] }
