package chaos

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/report"
	"github.com/zkrecipes/zkrecipes/chaos/workloads"
)

func TestJudgeMutants(t *testing.T) {
	cases, err := SelectMutants(workloads.MutantCases(), "lock-stepdown-mutant,counter-blind-mutant")
	if err != nil {
		t.Fatal(err)
	}
	fired := func(name string, n int) checkers.Result {
		return checkers.Result{Checker: name, Violations: make([]checkers.Violation, n)}
	}
	tests := []struct {
		name   string
		scs    []report.ScenarioResult
		caught []bool // lock-stepdown-mutant/partition-expire, counter-blind-mutant/half-open
		fired  [][]string
	}{
		{"both caught by their checkers", []report.ScenarioResult{
			{Scenario: "lock-stepdown-mutant/partition-expire", Results: []checkers.Result{fired("mutual-exclusion", 3), fired("fencing", 0)}},
			{Scenario: "counter-blind-mutant/half-open", Results: []checkers.Result{fired("counter-linearizable", 1)}},
		}, []bool{true, true}, [][]string{{"mutual-exclusion:3"}, {"counter-linearizable:1"}}},
		{"another checker fired: missed", []report.ScenarioResult{
			{Scenario: "lock-stepdown-mutant/partition-expire", Results: []checkers.Result{fired("liveness", 1), fired("mutual-exclusion", 0)}},
			{Scenario: "counter-blind-mutant/half-open", Results: []checkers.Result{fired("counter-linearizable", 0)}},
		}, []bool{false, false}, [][]string{{"liveness:1"}, nil}},
		{"not run: missed", []report.ScenarioResult{
			{Scenario: "counter-blind-mutant/half-open", Results: []checkers.Result{fired("counter-linearizable", 2)}},
		}, []bool{false, true}, [][]string{nil, {"counter-linearizable:2"}}},
		{"not applicable: missed", []report.ScenarioResult{
			{Scenario: "lock-stepdown-mutant/partition-expire", NotApplicable: "external"},
			{Scenario: "counter-blind-mutant/half-open", Err: "workload: boom", Results: []checkers.Result{fired("counter-linearizable", 1)}},
		}, []bool{false, true}, [][]string{nil, {"counter-linearizable:1"}}},
		{"not exercised: missed, and says why", []report.ScenarioResult{
			{Scenario: "lock-stepdown-mutant/partition-expire", Results: []checkers.Result{fired("mutual-exclusion", 0),
				{Checker: "exercised", Checked: 1, Inconclusive: true, Note: "not exercised: partition-expire at 1s: the workload's aimed step (x) did not happen inside it"}}},
			{Scenario: "counter-blind-mutant/half-open", Results: []checkers.Result{fired("counter-linearizable", 1),
				{Checker: "exercised", Checked: 1, Inconclusive: true, Note: "not exercised: half-open left no target trace"}}},
		}, []bool{false, true}, [][]string{nil, {"counter-linearizable:1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs := JudgeMutants(report.Summary{Seed: 7, Scenarios: tt.scs}, cases)
			if len(vs) != 2 {
				t.Fatalf("%d verdicts, want 2: %v", len(vs), vs)
			}
			for i, v := range vs {
				if v.Seed != 7 || v.Caught != tt.caught[i] || !reflect.DeepEqual(v.Fired, tt.fired[i]) {
					t.Errorf("verdict %d: %+v, want caught %v fired %v", i, v, tt.caught[i], tt.fired[i])
				}
				if notEx := strings.HasPrefix(v.Why, "not exercised"); notEx != (tt.name == "not exercised: missed, and says why" && i == 0) {
					t.Errorf("verdict %d: why %q", i, v.Why)
				}
			}
		})
	}
	if _, err := SelectMutants(workloads.MutantCases(), "lock"); !errors.Is(err, ErrConfig) {
		t.Errorf("SelectMutants of a workload that is no mutant: %v, want ErrConfig", err)
	}
	scs, err := MutantScenarios(cases)
	if err != nil || len(scs) != 2 || scs[0].Name != "lock-stepdown-mutant/partition-expire" || scs[1].Name != "counter-blind-mutant/half-open" {
		t.Errorf("MutantScenarios = %v, %v", scs, err)
	}
}
