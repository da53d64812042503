package workloads

// All returns the workloads of the matrix, one per recipe (and the
// raw-ZooKeeper register). The recipes after lock take a deterministic
// subset of the faults in the quick tier (QuickFaults, chosen so that
// together they cover every in-process fault) and every fault in the full
// tier. LockProc runs its clients in
// worker processes: the binary must call RunWorkerIfAsked first thing in
// main (or TestMain). The deliberately broken
// variants are not part of it; tests and zkchaos -broken add them.
func All() []Workload {
	return []Workload{&Register{}, &Lock{}, &LockProc{}, &Leader{}, &RWLock{}, &Semaphore{}, &Queue{}, &Barrier{}, &TwoPhase{}, &Counter{}, &MultiLock{}, &SemaphoreMax{}, &Membership{}, &Persistent{}, &Partitioner{}, &Discovery{}, &Cache{}}
}

// quickFaults is the quick tier's faults of each recipe workload after
// lock. Every workload with holdings also takes the placed isolations
// (isolate-holder-follower: the holder's session on an isolated follower
// while a waiter's is on the leader, and its reverse). The first of each is its representative fault, the one the
// package's end-to-end test runs (see QuickFaults).
var quickFaults = map[string][]string{
	"leader":    {"kill-leader", "partition-expire", "isolate-leader", "half-open", "isolate-holder-follower", "isolate-holder-leader"},
	"rwlock":    {"partition-expire", "latency-near", "slicer", "lose-quorum", "isolate-holder-follower", "isolate-holder-leader"},
	"semaphore": {"cut-short", "kill-follower", "limit-data", "slow-close", "isolate-holder-follower", "isolate-holder-leader"},
	"queue":     {"half-open", "kill-follower", "bandwidth", "latency-low"},
	"barrier":   {"pause-server", "cut-short", "kill-leader", "lose-quorum"},
	"twophase":  {"partition-expire", "kill-leader", "half-open", "pause-server"},
	"counter":   {"half-open", "kill-leader", "partition-expire", "limit-data"},
	"multilock": {"partition-expire", "cut-short", "kill-follower", "latency-near", "isolate-holder-follower", "isolate-holder-leader"},
	// semaphore-max: a maximum changed while a client is cut off (cut-short)
	// or gone (partition-expire), lost answers to creates and to changes of
	// the count (half-open), and a follower serving stale reads until it
	// notices it lost the quorum (partition-minority).
	"semaphore-max": {"cut-short", "partition-expire", "half-open", "partition-minority", "isolate-holder-follower", "isolate-holder-leader"},
	// membership: a member's or an observer's session expired
	// (partition-expire), lost answers to the member's creates and sets
	// (half-open), sessions moved off a killed or frozen server
	// (kill-follower, pause-server).
	"membership": {"partition-expire", "half-open", "kill-follower", "pause-server"},
	// persistent: a present client's session expired (partition-expire),
	// lost answers to its creates and deletes (half-open), and its server
	// cut from the leader while its link stays up, the node's presence
	// then ending on the lease alone (the placed isolations).
	"persistent": {"partition-expire", "half-open", "isolate-holder-follower", "isolate-holder-leader"},
	// partitioner: a member's session expired, its items taken over and
	// given back (partition-expire), lost answers to lock creates and
	// fenced writes (half-open), members' sessions moved off a frozen
	// server past the session timeout (pause-server) and a new ZooKeeper
	// leader (kill-leader), all while a member churns.
	"partitioner": {"partition-expire", "half-open", "pause-server", "kill-leader", "isolate-holder-follower", "isolate-holder-leader"},
	"discovery":   {"partition-expire", "half-open", "kill-leader", "cut-short"},
	// cache: reads lost with connections dropped mid-response (limit-data),
	// a cache's session expired and rebuilt (partition-expire), watch
	// events lost with the responses (half-open), a new ZooKeeper leader
	// while the writers write (kill-leader).
	"cache": {"limit-data", "partition-expire", "half-open", "kill-leader"},
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

// QuickFaults names the counter workload's quick-tier faults.
func (w *Counter) QuickFaults() []string { return quickFaults[w.Name()] }

// QuickFaults names the faults that expose the counter's blind-retry mutant.
func (w *CounterBlind) QuickFaults() []string { return mutantFaults["counter-blind"] }

// QuickFaults names the multilock workload's quick-tier faults.
func (w *MultiLock) QuickFaults() []string { return quickFaults[w.Name()] }

// QuickFaults names the semaphore-max workload's quick-tier faults.
func (w *SemaphoreMax) QuickFaults() []string { return quickFaults[w.Name()] }

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

// Broken returns workloads that must fail their checks: proof that
// the suite catches a broken client or recipe. register-broken and
// lock-broken fail with or without a fault; the mutants of MutantCases fail
// only under the faults that expose them (their QuickFaults, the only
// scenarios the matrix gives them).
func Broken() []Workload {
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
	"lock-stepdown":     {"partition-expire"},
	"fence":             {"freeze-client"},
	"rwlock-stale":      {"latency-low"},
	"twophase-timeout":  {"partition-expire"},
	"queue-bypath":      {"half-open"},
	"leader-owner":      {"partition-expire"},
	"counter-blind":     {"half-open"},
	"multilock-partial": {"partition-expire"},
	"semaphore-cache":   {"partition-expire"},
	"membership-once":   {"partition-expire"},
	"persistent-expiry": {"isolate-holder-follower"},
	"partitioner-stale": {"partition-expire"},
	"discovery-rearm":   {"partition-expire"},
	"cache-reread":      {"limit-data"},
	// the upstream bug classes (upstream_mutant.go)
	"lock-release": {"cut-short"},
	"lock-try":     {"limit-data"},
	"leader-timer": {"partition-expire"},
	"rwlock-gone":  {"partition-expire@waiter"},
	"rwlock-later": {"latency-low"},
	"lock-create":  {"limit-data"},
	"barrier-wake": {"cut-short"},

	// kazoo #282 (upstream_lock_mutant.go)
	"lock-reacquire": {"cut-short"},

	// CURATOR-391 (upstream_cache_mutant.go)
	"cache-recreate": {"cut-short"},
	// etcd #19597 and CURATOR-604 (upstream_session_mutant.go)
	"lock-gone":  {"partition-expire@waiter"},
	"lock-adopt": {"half-open"},
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
		{Mutant: &CounterBlind{Mutant: true}, Twin: &CounterBlind{}, Catch: []string{"counter-linearizable"}, Mild: []string{"latency-low"}},
		{Mutant: &MultiLockPartial{Mutant: true}, Twin: &MultiLockPartial{}, Catch: []string{"mutual-exclusion"}, Mild: []string{"cut-short"}},
		{Mutant: &SemaphoreCache{Mutant: true}, Twin: &SemaphoreCache{}, Catch: []string{"semaphore-max"}, Mild: []string{"cut-short"}},
		{Mutant: &MembershipOnce{Mutant: true}, Twin: &MembershipOnce{}, Catch: []string{"membership"}, Mild: []string{"cut-short"}},
		{Mutant: &PersistentExpiry{Mutant: true}, Twin: &PersistentExpiry{}, Catch: []string{"mutual-exclusion"}, Mild: []string{"cut-short"}},
		{Mutant: &PartitionerStale{Mutant: true}, Twin: &PartitionerStale{}, Catch: []string{"mutual-exclusion"}, Mild: []string{"cut-short"}},
		{Mutant: &DiscoveryRearm{Mutant: true}, Twin: &DiscoveryRearm{}, Catch: []string{"discovery-converges"}, Mild: []string{"cut-short"}},
		{Mutant: &Cache{Mutant: true}, Twin: &Cache{Twin: true}, Catch: []string{"cache-converges"}, Mild: []string{"latency-low"}},
		// The upstream bug classes (UpstreamBugs; leader-owner above is CURATOR-696).
		{Mutant: &LockRelease{Mutant: true}, Twin: &LockRelease{}, Catch: []string{"no-nodes-left", "liveness"}, Mild: []string{"latency-low"}},
		{Mutant: &LockTry{Mutant: true}, Twin: &LockTry{}, Catch: []string{"no-nodes-left", "liveness"}, Mild: []string{"latency-low"}},
		{Mutant: &LeaderTimer{Mutant: true}, Twin: &LeaderTimer{}, Catch: []string{"single-leader"}, Mild: []string{"cut-short"}},
		{Mutant: &RWLockGone{Mutant: true}, Twin: &RWLockGone{}, Catch: []string{"writer-exclusive"}, Mild: []string{"cut-short"}},
		{Mutant: &RWLockLater{Mutant: true}, Twin: &RWLockLater{}, Catch: []string{"liveness"}},
		{Mutant: &LockCreate{Mutant: true}, Twin: &LockCreate{}, Catch: []string{"no-nodes-left", "liveness"}, Mild: []string{"latency-low"}},
		{Mutant: &LockReacquire{Mutant: true}, Twin: &LockReacquire{}, Catch: []string{"no-nodes-left", "liveness"}, Mild: []string{"latency-low"}},
		{Mutant: &BarrierWake{Mutant: true}, Twin: &BarrierWake{}, Catch: []string{"double-barrier"}, Mild: []string{"latency-low"}},
		{Mutant: &CacheRecreate{Mutant: true}, Twin: &CacheRecreate{}, Catch: []string{"cache-converges"}, Mild: []string{"latency-low"}},
		{Mutant: &LockGone{Mutant: true}, Twin: &LockGone{}, Catch: []string{"mutual-exclusion"}, Mild: []string{"cut-short"}},
		{Mutant: &LockAdopt{Mutant: true}, Twin: &LockAdopt{}, Catch: []string{"mutual-exclusion"}, Mild: []string{"latency-low"}},
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

// QuickFaults names the faults that expose the multi-lock partial mutant.
func (w *MultiLockPartial) QuickFaults() []string { return mutantFaults["multilock-partial"] }

// QuickFaults names the faults that expose the semaphore cache mutant.
func (w *SemaphoreCache) QuickFaults() []string { return mutantFaults["semaphore-cache"] }

// QuickFaults names the faults that expose the leader owner mutant.
func (w *LeaderOwner) QuickFaults() []string { return mutantFaults["leader-owner"] }
