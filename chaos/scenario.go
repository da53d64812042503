package chaos

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/faults"
	"github.com/zkrecipes/zkrecipes/chaos/workloads"
)

// Scenario is a workload under a list of faults (one in the quick tier's
// fault x workload matrix; several in a mixed scenario).
type Scenario struct {
	Name     string
	Workload workloads.Workload
	Faults   []faults.Fault
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
	pw, ok := s.Workload.(workloads.ProcessWorkload)
	inProc := ok && pw.InProcesses()
	for _, f := range s.Faults {
		if f.Place != "" && !f.NeedsProcesses {
			continue // placed faults take any client
		}
		if f.NeedsProcesses != inProc {
			return false
		}
	}
	return true
}

// Matrix returns the scenarios of a tier for the given workloads: every
// workload under every fault it supports (in the quick tier, its
// QuickFaults for a workloads.QuickFaulter, else the quick faults that name
// it in Fault.QuickFor or name no workload) and, in the full tier, a mixed
// scenario per workload that draws from every fault but the placed ones
// (Fault.Place). Faults aimed at a
// waiter go only to workloads with holdings. Sorted by name.
func Matrix(tier faults.Tier, ws ...workloads.Workload) []Scenario {
	var out []Scenario
	for _, w := range ws {
		var all []faults.Fault
		var quick map[string]bool
		if qf, ok := w.(workloads.QuickFaulter); ok && tier != faults.TierFull {
			quick = map[string]bool{}
			for _, f := range qf.QuickFaults() {
				quick[f] = true
			}
		}
		holders := hasHolders(w)
		for _, f := range faults.Catalogue() {
			// A workload that names its quick faults gets exactly those;
			// the others get the quick faults that name them or no one.
			if tier != faults.TierFull && ((quick != nil && !quick[f.Name]) || (quick == nil && !f.InQuick(w.Name()))) {
				continue
			}
			if f.Aim == faults.RoleWaiter && !holders {
				continue // nobody waits in a workload without holdings
			}
			sc := Scenario{Name: w.Name() + "/" + f.Name, Workload: w, Faults: []faults.Fault{f}}
			if !sc.supports() {
				continue
			}
			if f.Place == "" { // a placement would bind a mixed scenario's other faults
				all = append(all, f)
			}
			out = append(out, sc)
		}
		if tier == faults.TierFull && len(all) > 1 { // a mixed scenario
			out = append(out, Scenario{Name: w.Name() + "/mixed", Workload: w, Faults: all})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// hasHolders reports whether w's clients hold something exclusively or
// up to a limit (lock, leader, rwlock, semaphore), so that some may wait.
func hasHolders(w workloads.Workload) bool {
	for _, c := range w.Checkers(workloads.CheckConfig{}) {
		if checkers.Exclusive([]checkers.Checker{c}) || strings.HasPrefix(c.Name, "semaphore-") {
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

// SelectWorkloads keeps the workloads named in the comma-separated list
// names, in the order of ws; an empty list keeps all. A name that matches
// no workload fails with ErrConfig (naming the known ones).
func SelectWorkloads(ws []workloads.Workload, names string) ([]workloads.Workload, error) {
	if strings.TrimSpace(names) == "" {
		return ws, nil
	}
	want := map[string]bool{}
	for _, n := range strings.Split(names, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	var out []workloads.Workload
	var known []string
	for _, w := range ws {
		known = append(known, w.Name())
		if want[w.Name()] {
			out = append(out, w)
			delete(want, w.Name())
		}
	}
	if len(want) > 0 {
		var unknown []string
		for n := range want {
			unknown = append(unknown, n)
		}
		sort.Strings(unknown)
		return nil, fmt.Errorf("%w: unknown workloads %v (known: %s)", ErrConfig, unknown, strings.Join(known, ","))
	}
	return out, nil
}
