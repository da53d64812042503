package report

import (
	"testing"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
)

// TestKeepsHistory: a green run keeps the first history of each workload;
// failures, not-exercised and inconclusive scenarios always keep theirs;
// AllHistories keeps every one.
func TestKeepsHistory(t *testing.T) {
	ok := []checkers.Result{{Checker: "linearizable", Checked: 5}}
	sc := func(name, workload string, res ...checkers.Result) ScenarioResult {
		if res == nil {
			res = ok
		}
		return ScenarioResult{Scenario: name, Workload: workload, Results: res}
	}
	na := ScenarioResult{Scenario: "lock/kill-all", Workload: "lock", NotApplicable: "external servers"}
	s := Summary{Scenarios: []ScenarioResult{
		na,
		sc("lock/a", "lock"),
		sc("lock/b", "lock"),
		sc("lock/c", "lock", checkers.Result{Checker: "mutual-exclusion", Checked: 3, Violations: []checkers.Violation{{Msg: "two holders"}}}),
		sc("lock/d", "lock", checkers.Result{Checker: "exercised", Inconclusive: true}),
		sc("lock/e", "lock", checkers.Result{Checker: "linearizable", Inconclusive: true}),
		sc("lock/f", "lock", checkers.Result{Checker: "linearizable", Checked: 3000, Of: 4072}),
		sc("lock/g", "lock", checkers.Result{Checker: "mutual-exclusion", Voided: true}),
		sc("queue/a", "queue"),
		sc("queue/b", "queue", ScenarioResult{}.Results...),
	}}
	want := map[string]bool{
		"lock/a": true, "lock/b": false, "lock/c": true, "lock/d": true, "lock/e": true,
		"lock/f": false, "lock/g": false, "queue/a": true, "queue/b": false,
	}
	for _, r := range s.Scenarios[1:] {
		if got := s.KeepsHistory(r); got != want[r.Scenario] {
			t.Errorf("%s: keeps %v, want %v", r.Scenario, got, want[r.Scenario])
		}
	}
	s.AllHistories = true
	for _, r := range s.Scenarios[1:] {
		if !s.KeepsHistory(r) {
			t.Errorf("%s: not kept with AllHistories", r.Scenario)
		}
	}
	// A scenario not (yet) in the summary keeps its history.
	if !(Summary{}).KeepsHistory(sc("lock/z", "lock")) {
		t.Error("a scenario outside the summary: not kept")
	}
}
