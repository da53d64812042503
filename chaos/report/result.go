package report

import (
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/faults"
	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// ScenarioResult is what one scenario did and what the checkers found.
type ScenarioResult struct {
	Scenario string            `json:"scenario"`
	Workload string            `json:"workload"`
	Faults   string            `json:"faults"`
	Schedule faults.Schedule   `json:"schedule"`
	Results  []checkers.Result `json:"results"`
	Ops      int               `json:"ops"`      // completed operations and holdings
	Injected int               `json:"injected"` // fault windows injected
	Took     time.Duration     `json:"took"`
	// Ran is how long the workload ran under its faults, up to the end of
	// the leftover check (Took adds the checkers' time).
	Ran time.Duration `json:"ran"`
	// Err is set when the scenario could not run as scheduled (a fault
	// could not be injected, the workload failed); it fails the run.
	Err string `json:"err,omitempty"`
	// NotApplicable, when set, says why the scenario was not run at all (a
	// server fault on servers the suite did not start, a fault TLS rules
	// out): it is neither a pass nor a failure, and has no results.
	NotApplicable string `json:"not_applicable,omitempty"`
	// Targets is what each injected fault really struck, in order.
	Targets []faults.Target `json:"targets,omitempty"`
	// Margins counts the handoffs after a loss (see checkers.LeaseMargins);
	// MarginMin and MarginMedian are their smallest and median margins.
	Margins      int             `json:"margins,omitempty"`
	MarginMin    time.Duration   `json:"margin_min,omitempty"`
	MarginMedian time.Duration   `json:"margin_median,omitempty"`
	History      history.History `json:"-"`
}

// Violations counts the violations found by every checker.
func (r ScenarioResult) Violations() int {
	n := 0
	for _, c := range r.Results {
		n += len(c.Violations)
	}
	return n
}

// Failed reports a violation or an error.
func (r ScenarioResult) Failed() bool { return r.Err != "" || r.Violations() > 0 }
