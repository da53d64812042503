package chaos

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
)

// Workload drives one recipe (or raw ZooKeeper) with several clients and
// records what they observe. A workload per recipe plugs in here.
type Workload interface {
	// Name is short and stable: scenarios are named "<workload>/<fault>".
	Name() string
	// Run makes env.Clients clients with env.NewClient (each on its own
	// link), drives them until ctx is done, records their events in
	// env.Rec, and returns only after closing every session it opened.
	Run(ctx context.Context, env *Env) error
	// Checkers returns the invariants to prove over the history.
	Checkers(cfg Config) []Checker
}

// ProcessWorkload is a Workload whose clients run in worker processes, so
// the freeze-client fault can stop them.
type ProcessWorkload interface {
	Workload
	InProcesses() bool
}

// QuickFaulter is a Workload that takes only some faults in the quick
// tier, to keep it short; the full tier gives it every fault it supports.
type QuickFaulter interface {
	Workload
	// QuickFaults names the faults of its quick-tier scenarios.
	QuickFaults() []string
}

// Scenario is a workload under a list of faults (one in the quick tier's
// fault x workload matrix; several in a mixed scenario).
type Scenario struct {
	Name     string
	Workload Workload
	Faults   []Fault
}

// FaultNames joins the scenario's fault names.
func (s Scenario) FaultNames() string {
	var n []string
	for _, f := range s.Faults {
		n = append(n, f.Name)
	}
	return strings.Join(n, ",")
}

// supports reports whether the scenario's workload takes every fault:
// in-process workloads take the faults that do not need processes, and
// process workloads only those that do (the in-process twin covers the
// rest, faster).
func (s Scenario) supports() bool {
	pw, ok := s.Workload.(ProcessWorkload)
	inProc := ok && pw.InProcesses()
	for _, f := range s.Faults {
		if f.NeedsProcesses != inProc {
			return false
		}
	}
	return true
}

// Matrix returns the scenarios of a tier for the given workloads: every
// workload under every fault it supports (in the quick tier, its
// QuickFaults for a QuickFaulter, else the quick faults that name it in
// QuickFor or name no workload) and, in the full tier, a mixed scenario
// per workload that draws from every fault. Faults aimed at a waiter go
// only to workloads with holdings. Sorted by name.
func Matrix(tier Tier, workloads ...Workload) []Scenario {
	var out []Scenario
	for _, w := range workloads {
		var all []Fault
		var quick map[string]bool
		if qf, ok := w.(QuickFaulter); ok && tier != TierFull {
			quick = map[string]bool{}
			for _, f := range qf.QuickFaults() {
				quick[f] = true
			}
		}
		holders := hasHolders(w)
		for _, f := range Catalogue() {
			// A workload that names its quick faults gets exactly those;
			// the others get the quick faults that name them or no one.
			if tier != TierFull && ((quick != nil && !quick[f.Name]) || (quick == nil && !f.quickFor(w.Name()))) {
				continue
			}
			if f.Aim == RoleWaiter && !holders {
				continue // nobody waits in a workload without holdings
			}
			sc := Scenario{Name: w.Name() + "/" + f.Name, Workload: w, Faults: []Fault{f}}
			if !sc.supports() {
				continue
			}
			all = append(all, f)
			out = append(out, sc)
		}
		if tier == TierFull && len(all) > 1 { // a mixed scenario
			out = append(out, Scenario{Name: w.Name() + "/mixed", Workload: w, Faults: all})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// hasHolders reports whether w's clients hold something exclusively or
// up to a limit (lock, leader, rwlock, semaphore), so that some may wait.
func hasHolders(w Workload) bool {
	for _, c := range w.Checkers(Config{}) {
		if exclusive([]Checker{c}) || strings.HasPrefix(c.Name, "semaphore-") {
			return true
		}
	}
	return false
}

// Select keeps the scenarios whose name matches one of the comma-separated
// patterns (path.Match globs, "register/*", or a plain prefix such as
// "register"). An empty filter keeps all.
func Select(scs []Scenario, filter string) ([]Scenario, error) {
	if strings.TrimSpace(filter) == "" {
		return scs, nil
	}
	var pats []string
	for _, p := range strings.Split(filter, ",") {
		if p = strings.TrimSpace(p); p != "" {
			if _, err := path.Match(p, ""); err != nil {
				return nil, fmt.Errorf("%w: pattern %q: %v", ErrConfig, p, err)
			}
			pats = append(pats, p)
		}
	}
	var out []Scenario
	for _, s := range scs {
		for _, p := range pats {
			if ok, _ := path.Match(p, s.Name); ok || s.Name == p || strings.HasPrefix(s.Name, p+"/") {
				out = append(out, s)
				break
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %q", ErrNoScenarios, filter)
	}
	return out, nil
}
