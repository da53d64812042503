package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/faults"
)

// Summary is a whole run: its parameters and every scenario's result.
type Summary struct {
	Seed           uint64           `json:"seed"`
	Tier           faults.Tier      `json:"tier"`
	Command        string           `json:"command,omitempty"`
	Backend        string           `json:"backend,omitempty"`
	Started        time.Time        `json:"started"`
	Took           time.Duration    `json:"took"`
	Duration       time.Duration    `json:"duration"`
	SessionTimeout time.Duration    `json:"session_timeout"`
	Clients        int              `json:"clients"`
	Scenarios      []ScenarioResult `json:"scenarios"`
	// Secure is set when every session used TLS and digest credentials.
	Secure bool `json:"secure,omitempty"`
	// Root is the znode under which the run kept every node; RootLeft
	// lists what a final listing found under it after the run removed it
	// (empty on a clean run), RootErr why that listing failed. Either
	// fails the run.
	Root     string   `json:"root,omitempty"`
	RootLeft []string `json:"root_left,omitempty"`
	RootErr  string   `json:"root_err,omitempty"`
	// Planned counts the scenarios the run set out to play; Partial is set
	// on the snapshots written while it runs. Either makes the verdict
	// "incomplete" until a failure makes it "fail" (see Verdict).
	Planned int  `json:"planned,omitempty"`
	Partial bool `json:"partial,omitempty"`
	// Cut is set when the run stopped before its plan was over (ctx ended:
	// interrupted, or a scenario left the ensemble unhealable): the last
	// scenario is the one it stopped in.
	Cut bool `json:"cut,omitempty"`
	// Replay is the command that replays a scenario of the run less its
	// -seed and -scenarios flags (see ReplayCommand); Select is the
	// -scenarios filter the run was given, if any.
	Replay string `json:"-"`
	Select string `json:"-"`
	// AllHistories keeps every scenario's history in the report (zkchaos
	// -all-histories); by default only those KeepsHistory names.
	AllHistories bool `json:"-"`
}

// NotApplicable counts the scenarios that were not run (see
// ScenarioResult.NotApplicable).
func (s Summary) NotApplicable() int {
	n := 0
	for _, r := range s.Scenarios {
		if r.NotApplicable != "" {
			n++
		}
	}
	return n
}

// Passed counts the scenarios that ran and passed: not applicable and
// not exercised ones are not passes.
func (s Summary) Passed() int {
	n := 0
	for _, r := range s.Scenarios {
		if r.Verdict() == VerdictPass {
			n++
		}
	}
	return n
}

// Violations counts every violation of every scenario.
func (s Summary) Violations() int {
	n := 0
	for _, r := range s.Scenarios {
		n += r.Violations()
	}
	return n
}

// Errors counts scenarios that could not run as scheduled.
func (s Summary) Errors() int {
	n := 0
	for _, r := range s.Scenarios {
		if r.Err != "" {
			n++
		}
	}
	return n
}

// Ops counts completed operations and holdings over every scenario.
func (s Summary) Ops() int {
	n := 0
	for _, r := range s.Scenarios {
		n += r.Ops
	}
	return n
}

// Injected counts fault windows injected over every scenario.
func (s Summary) Injected() int {
	n := 0
	for _, r := range s.Scenarios {
		n += r.Injected
	}
	return n
}

// Failed reports a violation or an error in any scenario, or nodes left
// under the run's root (or a root that could not be listed).
func (s Summary) Failed() bool {
	return s.Violations() > 0 || s.Errors() > 0 || len(s.RootLeft) > 0 || s.RootErr != ""
}

// Checkers returns the checker names of every scenario, in order of first
// appearance: the columns of the summary table.
func (s Summary) Checkers() []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range s.Scenarios {
		for _, c := range r.Results {
			if !seen[c.Checker] {
				seen[c.Checker] = true
				out = append(out, c.Checker)
			}
		}
	}
	return out
}

// Group is the scenarios of one workload, with the checkers they ran: one
// table of the summary.
type Group struct {
	Workload  string
	Checkers  []string
	Scenarios []ScenarioResult
}

// Groups returns the scenarios grouped by workload, in order of first
// appearance, each with the checkers its scenarios ran (its columns).
func (s Summary) Groups() []Group {
	var out []Group
	at := map[string]int{}
	for _, r := range s.Scenarios {
		i, ok := at[r.Workload]
		if !ok {
			i = len(out)
			at[r.Workload] = i
			out = append(out, Group{Workload: r.Workload})
		}
		out[i].Scenarios = append(out[i].Scenarios, r)
	}
	for i := range out {
		sub := Summary{Scenarios: out[i].Scenarios}
		out[i].Checkers = sub.Checkers()
	}
	return out
}

// NotExercised counts scenarios that the throughput check (too few
// operations before the fault) or the exercised check (a fault left no
// trace) flagged (quick tier) or failed (full tier).
func (s Summary) NotExercised() int {
	n := 0
	for _, r := range s.Scenarios {
		if r.notExercised() {
			n++
		}
	}
	return n
}

func (r ScenarioResult) notExercised() bool {
	for _, c := range r.Results {
		if notExercisedBy[c.Checker] && (c.Inconclusive || len(c.Violations) > 0) {
			return true
		}
	}
	return false
}

// MarginCell shows the scenario's lease margins: "min/median", "none"
// when no handoff followed a loss, "n/a" when the workload's holdings do
// not exclude each other (no lease-margin check: a semaphore's permits,
// a reader's lock) so that a margin would measure nothing. A minimum of
// zero or less is an overlap, and says so, with the check's verdict when
// that is not a failure (voided: the fault allows it).
func (r ScenarioResult) MarginCell() string {
	lm, ok := r.Result(checkers.LeaseMarginName)
	switch {
	case !ok:
		return "n/a"
	case r.Margins == 0:
		return "none"
	}
	cell := fmt.Sprintf("%v/%v", r.MarginMin.Round(time.Millisecond), r.MarginMedian.Round(time.Millisecond))
	if r.MarginMin <= 0 {
		cell += " overlap"
		if st := StatusOf(lm); st != StatusFail {
			cell += " (" + string(st) + ")"
		}
	}
	return cell
}

// TargetCell lists what the scenario's faults struck, in order.
func (r ScenarioResult) TargetCell() string {
	var out []string
	for _, t := range r.Targets {
		out = append(out, t.String())
	}
	return strings.Join(out, "; ")
}

// Result returns the named checker's result of r, if it ran.
func (r ScenarioResult) Result(checker string) (checkers.Result, bool) {
	for _, c := range r.Results {
		if c.Checker == checker {
			return c, true
		}
	}
	return checkers.Result{}, false
}

// Cell is how the summary shows one checker's result: "ok 123" (items
// checked), "3 VIOLATION(S)", "3000/4072" (capped: the first 3000 of 4072
// items checked), "? 123" (inconclusive), "not exercised" (throughput or
// exercised flagged in the quick tier), "void 2 (freeze-client)" (voided
// by that fault, 2 findings not counted), "n/a" (nothing to check) or "-"
// (not run). CellClass colours it.
func (r ScenarioResult) Cell(checker string) string {
	c, ok := r.Result(checker)
	if !ok {
		return "-"
	}
	switch StatusOf(c) {
	case StatusFail:
		return fmt.Sprintf("%d VIOLATION(S)", len(c.Violations))
	case StatusVoided:
		if c.VoidedBy == "" {
			return fmt.Sprintf("void %d", c.Expected)
		}
		return fmt.Sprintf("void %d (%s)", c.Expected, c.VoidedBy)
	case StatusNotExercised:
		return "not exercised"
	case StatusInconclusive:
		return fmt.Sprintf("? %d", c.Checked)
	case StatusCapped:
		return fmt.Sprintf("%d/%d", c.Checked, c.Of)
	case StatusEmpty:
		return "n/a"
	}
	return fmt.Sprintf("ok %d", c.Checked)
}

// CellClass is the colour class of a cell: "good" (a pass), "bad" (a
// failure), "warn" (amber: capped, inconclusive, not exercised), "void"
// (voided by the fault) or "na" (grey: nothing checked, not run).
func (r ScenarioResult) CellClass(checker string) string {
	c, ok := r.Result(checker)
	if !ok {
		return "na"
	}
	switch StatusOf(c) {
	case StatusPass:
		return "good"
	case StatusFail:
		return "bad"
	case StatusVoided:
		return "void"
	case StatusEmpty:
		return "na"
	}
	return "warn"
}

// CellTitle is the tooltip of a cell: the checker's note, the reason of a
// cell that is not a plain pass.
func (r ScenarioResult) CellTitle(checker string) string {
	c, ok := r.Result(checker)
	if !ok {
		return "not run for this workload"
	}
	if why := Reason(c); why != "" {
		return why
	}
	return c.Note
}

// Line is a scenario on one line with every checker's cell, its margins,
// targets and error, however long: for test messages and logs. The
// progress line zkchaos prints is ProgressLine.
func (r ScenarioResult) Line() string {
	if r.NotApplicable != "" {
		return fmt.Sprintf("N/A  %-34s not applicable: %s", r.Scenario, r.NotApplicable)
	}
	status := "PASS"
	if r.Failed() {
		status = "FAIL"
	}
	var parts []string
	for _, c := range r.Results {
		parts = append(parts, c.Checker+"="+r.Cell(c.Checker))
	}
	line := fmt.Sprintf("%s %-34s faults=%d ops=%d %s (%v)", status, r.Scenario, r.Injected, r.Ops, strings.Join(parts, " "), r.Took.Round(100*time.Millisecond))
	if r.Margins > 0 {
		line += " margin=" + r.MarginCell()
	}
	if tc := r.TargetCell(); tc != "" {
		line += " target: " + tc
	}
	if r.Err != "" {
		line += " error: " + r.Err
	}
	return line
}

// WriteTable writes the summary as text: a table per workload (scenario x
// the invariants that workload checks, the lease margins' minimum and
// median, what the faults struck), then the totals.
func (s Summary) WriteTable(w io.Writer) error {
	for _, g := range s.Groups() {
		fmt.Fprintf(w, "workload %s\n", g.Workload)
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "  scenario\tfaults\tops\t%s\tmargin min/median\ttook\ttargets\terror\n", strings.Join(g.Checkers, "\t"))
		for _, r := range g.Scenarios {
			cells := make([]string, len(g.Checkers))
			for i, c := range g.Checkers {
				cells[i] = r.Cell(c)
			}
			errText := r.Err
			if r.NotApplicable != "" {
				for i := range cells {
					cells[i] = "n/a"
				}
				errText = "not applicable: " + r.NotApplicable
			}
			if len(errText) > 60 && r.NotApplicable == "" {
				errText = errText[:57] + "..."
			}
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%s\t%s\t%v\t%s\t%s\n", r.Scenario, r.Injected, r.Ops, strings.Join(cells, "\t"), r.MarginCell(),
				r.Took.Round(100*time.Millisecond), r.TargetCell(), errText)
		}
		tw.Flush()
	}
	secure := ""
	if s.Secure {
		secure = " (secured: TLS and digest auth)"
	}
	if _, err := fmt.Fprintf(w, "seed %d, tier %s%s: %d scenarios, %d passed, %d not applicable, %d faults injected, %d operations, %d violations, %d errors, %d not exercised (%v)\n",
		s.Seed, s.Tier, secure, len(s.Scenarios), s.Passed(), s.NotApplicable(), s.Injected(), s.Ops(), s.Violations(), s.Errors(), s.NotExercised(), s.Took.Round(time.Second)); err != nil {
		return err
	}
	if s.Root == "" {
		return nil
	}
	_, err := fmt.Fprintln(w, s.RootLine())
	return err
}

// RootLine says what the final listing of the run's root found: nothing,
// the nodes left, or why it could not list.
func (s Summary) RootLine() string {
	switch {
	case s.RootErr != "":
		return fmt.Sprintf("root %s: cannot list it after the run: %s", s.Root, s.RootErr)
	case len(s.RootLeft) > 0:
		return fmt.Sprintf("root %s: %d nodes LEFT after the run: %s", s.Root, len(s.RootLeft), strings.Join(s.RootLeft, ", "))
	}
	return fmt.Sprintf("root %s: removed, a final listing found nothing left", s.Root)
}
