package chaos

import (
	"fmt"
	"strings"

	"github.com/zkrecipes/zkrecipes/lab/chaos/faults"
	"github.com/zkrecipes/zkrecipes/lab/chaos/report"
	"github.com/zkrecipes/zkrecipes/lab/chaos/workloads"
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
	// Why is the scenario's error, or its not-applicable reason.
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
// early) is a miss, as is one that was not applicable. Pure.
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
			}
			out = append(out, v)
		}
	}
	return out
}
