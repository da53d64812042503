package report

import (
	"fmt"
	"strings"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
)

// Status is what one checker's result amounts to. Only StatusPass is a
// pass; only StatusFail fails the scenario; the others pass the scenario
// without proving the whole invariant, and the report says so (an amber
// or grey cell, a skipped JUnit case, an entry under "needs attention").
type Status string

const (
	StatusPass         Status = "pass"          // checked items, no violation
	StatusFail         Status = "fail"          // violations
	StatusVoided       Status = "voided"        // the scenario's fault voids the invariant by design
	StatusNotExercised Status = "not-exercised" // throughput or exercised flagged the scenario (quick tier)
	StatusInconclusive Status = "inconclusive"  // the checker could not decide
	StatusCapped       Status = "capped"        // only some of the items were checked (checkers.Result.Of)
	StatusEmpty        Status = "empty"         // nothing to check: a check that proves nothing
)

// notExercisedBy names the checkers whose "not exercised" verdict counts.
var notExercisedBy = map[string]bool{"throughput": true, "exercised": true}

// StatusOf classifies c; the first that applies wins: violations, voided,
// not exercised, inconclusive, capped, nothing checked, pass.
func StatusOf(c checkers.Result) Status {
	switch {
	case len(c.Violations) > 0:
		return StatusFail
	case c.Voided:
		return StatusVoided
	case c.Inconclusive && notExercisedBy[c.Checker]:
		return StatusNotExercised
	case c.Inconclusive:
		return StatusInconclusive
	case c.Capped():
		return StatusCapped
	case c.Checked == 0:
		return StatusEmpty
	}
	return StatusPass
}

// Reason says, for a result that is neither a pass nor a failure, why:
// the reason a JUnit case is skipped, the text of an entry under "needs
// attention". It is "" for a pass or a failure.
func Reason(c checkers.Result) string {
	note := ""
	if c.Note != "" {
		note = ": " + c.Note
	}
	// says: the status, then the note, unless the note begins with it
	says := func(status string) string {
		if strings.HasPrefix(c.Note, status) {
			return c.Note
		}
		return status + note
	}
	switch StatusOf(c) {
	case StatusVoided:
		if c.Note != "" {
			return "voided: " + c.Note
		}
		return "voided by " + c.VoidedBy
	case StatusNotExercised:
		return says("not exercised")
	case StatusInconclusive:
		return says("inconclusive")
	case StatusCapped:
		return fmt.Sprintf("capped: %d of %d items checked%s", c.Checked, c.Of, note)
	case StatusEmpty:
		return "nothing to check: 0 items" + note
	}
	return ""
}

// Verdicts of a scenario and of a run (summary.json "verdict").
const (
	VerdictPass          = "pass"
	VerdictFail          = "fail"
	VerdictNotApplicable = "not_applicable" // a scenario that could not run here
	VerdictIncomplete    = "incomplete"     // a run not over (or cut short) and no failure so far
	// VerdictNotExercised: no violation, but the scenario tested nothing
	// (a fault that left no trace, a workload too slow before its fault,
	// clients that could not be placed as asked): never a pass. A run
	// with such a scenario and no failure has this verdict too.
	VerdictNotExercised = "not_exercised"
)

// Verdict is the scenario's verdict: not applicable, fail (a violation or
// an error), not exercised (see VerdictNotExercised) or pass.
func (r ScenarioResult) Verdict() string {
	switch {
	case r.NotApplicable != "":
		return VerdictNotApplicable
	case r.Failed():
		return VerdictFail
	case r.notExercised():
		return VerdictNotExercised
	}
	return VerdictPass
}

// Verdict is the run's verdict: fail as soon as anything failed (see
// Failed), else incomplete while scenarios are missing (see Complete),
// else not exercised when a scenario was (see NotExercised), else pass.
func (s Summary) Verdict() string {
	switch {
	case s.Failed():
		return VerdictFail
	case !s.Complete():
		return VerdictIncomplete
	case s.NotExercised() > 0:
		return VerdictNotExercised
	}
	return VerdictPass
}

// Complete reports whether the run is over with every planned scenario:
// not a snapshot written during the run (Partial), nor one cut short
// (Cut, or scenarios missing).
func (s Summary) Complete() bool {
	return !s.Partial && !s.Cut && len(s.Scenarios) >= s.Planned
}
