package chaos

// Workloads returns the workloads of the matrix, one per recipe that has
// landed (and the raw-ZooKeeper register). LockProc runs its clients in
// worker processes: the binary must call RunWorkerIfAsked first thing in
// main (or TestMain). The deliberately broken
// variants are not part of it; tests and zkchaos -broken add them.
func Workloads() []Workload {
	return []Workload{&Register{}, &Lock{}, &LockProc{}}
}

// BrokenWorkloads returns workloads that must fail their checks: proof that
// the suite catches a broken client or recipe.
func BrokenWorkloads() []Workload {
	return []Workload{&Register{Broken: true}, &Lock{Broken: true}}
}
