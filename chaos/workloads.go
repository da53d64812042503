package chaos

// Workloads returns the workloads of the matrix, one per recipe that has
// landed (and the raw-ZooKeeper register). The deliberately broken
// variants are not part of it; tests and zkchaos -broken add them.
func Workloads() []Workload {
	return []Workload{&Register{}, &Lock{}}
}

// BrokenWorkloads returns workloads that must fail their checks: proof that
// the suite catches a broken client or recipe.
func BrokenWorkloads() []Workload {
	return []Workload{&Register{Broken: true}, &Lock{Broken: true}}
}
