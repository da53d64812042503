package chaos

import (
	"fmt"
	"strings"

	"github.com/zkrecipes/zkrecipes/chaos/faults"
	"github.com/zkrecipes/zkrecipes/chaos/report"
	"github.com/zkrecipes/zkrecipes/chaos/workloads"
)

// MutantScenarios returns the scenarios of each mutant of cases: the
// mutant under each of its exposing faults (workloads.MutantCase.Faults),
// in order. Twins and mild faults are TestMutants's.
func MutantScenarios(cases []workloads.MutantCase) ([]Scenario, error) {
	var out []Scenario
	for _, mc := range cases {
		names, _ := mc.Scenarios()
		for i, f := range mc.Faults {
			fault, err := faults.ByName(f)
			if err != nil {
				return nil, err
			}
			out = append(out, Scenario{Name: names[i], Workload: mc.Mutant, Faults: []faults.Fault{fault}})
		}
	}
	return out, nil
}

// SelectMutants keeps the cases whose mutant is named in the
// comma-separated list names (empty: all); a name that is no mutant fails
// with ErrConfig.
func SelectMutants(cases []workloads.MutantCase, names string) ([]workloads.MutantCase, error) {
	var ws []workloads.Workload
	for _, mc := range cases {
		ws = append(ws, mc.Mutant)
	}
	keep, err := SelectWorkloads(ws, names)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, w := range keep {
		want[w.Name()] = true
	}
	var out []workloads.MutantCase
	for _, mc := range cases {
		if want[mc.Mutant.Name()] {
			out = append(out, mc)
		}
	}
	return out, nil
}

// MutantVerdict is whether one mutant scenario was caught on one seed.
type MutantVerdict struct {
	Seed     uint64
	Scenario string
	// Caught is set when one of the checkers that must catch the mutant
	// (workloads.MutantCase.Catch) found a violation.
	Caught bool
	// Fired lists every checker that found violations, as "name:count".
	Fired []string
	// Why is the scenario's error, or its not-applicable reason, or, for
	// a miss, why the scenario was not exercised (its window not hit).
	Why string
}

// String is one line of the verdict table.
func (v MutantVerdict) String() string {
	verdict := "caught"
	if !v.Caught {
		verdict = "MISSED"
	}
	s := fmt.Sprintf("seed %-20d %-42s %-6s %s", v.Seed, v.Scenario, verdict, strings.Join(v.Fired, ","))
	if v.Why != "" {
		s += " (" + v.Why + ")"
	}
	return s
}

// JudgeMutants returns the verdict of every mutant scenario of cases on
// sum's seed: caught when one of its case's Catch checkers found a
// violation in it. A scenario of cases missing from sum (the run stopped
// early) is a miss, as is one that was not applicable; a miss in a
// scenario that was not exercised says so (report.StatusNotExercised).
// Pure.
func JudgeMutants(sum report.Summary, cases []workloads.MutantCase) []MutantVerdict {
	var out []MutantVerdict
	for _, mc := range cases {
		names, _ := mc.Scenarios()
		for _, name := range names {
			v := MutantVerdict{Seed: sum.Seed, Scenario: name, Why: "not run"}
			for _, sc := range sum.Scenarios {
				if sc.Scenario != name {
					continue
				}
				v.Why = sc.Err
				if sc.NotApplicable != "" {
					v.Why = "not applicable: " + sc.NotApplicable
				}
				for _, c := range sc.Results {
					if len(c.Violations) > 0 {
						v.Fired = append(v.Fired, fmt.Sprintf("%s:%d", c.Checker, len(c.Violations)))
					}
				}
				for _, want := range mc.Catch {
					if c, ok := sc.Result(want); ok && len(c.Violations) > 0 {
						v.Caught = true
					}
				}
				for _, c := range sc.Results {
					if !v.Caught && v.Why == "" && report.StatusOf(c) == report.StatusNotExercised {
						v.Why = report.Reason(c)
					}
				}
			}
			out = append(out, v)
		}
	}
	return out
}

// UpstreamLine is the run's line on the upstream bug classes
// (workloads.UpstreamBugs that have a variant): "upstream bug classes: N
// of M caught", a class counted caught when every verdict of vs on its
// mutant's scenarios is caught, followed by the classes missed and by how
// many of the listed bugs have no variant yet, if any. Only the classes that have
// a verdict in vs are counted (a run may select some); with none, it
// returns "". Pure.
func UpstreamLine(vs []MutantVerdict) string {
	seen := map[string]bool{}   // mutant -> has a verdict
	missed := map[string]bool{} // mutant -> some verdict missed
	for _, v := range vs {
		m, _, _ := strings.Cut(v.Scenario, "/")
		seen[m] = true
		if !v.Caught {
			missed[m] = true
		}
	}
	total, caught, without := 0, 0, 0
	var miss []string
	for _, b := range workloads.UpstreamBugs() {
		switch {
		case b.Mutant == "":
			without++
		case seen[b.Mutant]:
			total++
			if missed[b.Mutant] {
				miss = append(miss, b.ID+" ("+b.Mutant+")")
			} else {
				caught++
			}
		}
	}
	if total == 0 {
		return ""
	}
	s := fmt.Sprintf("upstream bug classes: %d of %d caught", caught, total)
	if len(miss) > 0 {
		s += "; missed: " + strings.Join(miss, ", ")
	}
	if without > 0 {
		s += fmt.Sprintf(" (%d more listed in docs/upstream-bugs.md have no variant yet)", without)
	}
	return s
}

// SelectedVerdicts keeps the verdicts of vs whose scenario is among scs:
// the mutant scenarios a run selected.
func SelectedVerdicts(vs []MutantVerdict, scs []Scenario) []MutantVerdict {
	in := map[string]bool{}
	for _, sc := range scs {
		in[sc.Name] = true
	}
	var out []MutantVerdict
	for _, v := range vs {
		if in[v.Scenario] {
			out = append(out, v)
		}
	}
	return out
}
