package chaos

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Summary is a whole run: its parameters and every scenario's result.
type Summary struct {
	Seed           uint64           `json:"seed"`
	Tier           Tier             `json:"tier"`
	Command        string           `json:"command,omitempty"`
	Backend        string           `json:"backend,omitempty"`
	Started        time.Time        `json:"started"`
	Took           time.Duration    `json:"took"`
	Duration       time.Duration    `json:"duration"`
	SessionTimeout time.Duration    `json:"session_timeout"`
	Clients        int              `json:"clients"`
	Scenarios      []ScenarioResult `json:"scenarios"`
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

// Failed reports a violation or an error in any scenario.
func (s Summary) Failed() bool { return s.Violations() > 0 || s.Errors() > 0 }

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

// result returns the named checker's result of r, if it ran.
func (r ScenarioResult) result(checker string) (Result, bool) {
	for _, c := range r.Results {
		if c.Checker == checker {
			return c, true
		}
	}
	return Result{}, false
}

// Cell is how the summary shows one checker's result: "ok 123" (items
// checked), "3 VIOLATIONS", "? 123" (inconclusive) or "-" (not run).
func (r ScenarioResult) Cell(checker string) string {
	c, ok := r.result(checker)
	switch {
	case !ok:
		return "-"
	case len(c.Violations) > 0:
		return fmt.Sprintf("%d VIOLATION(S)", len(c.Violations))
	case c.Voided:
		return fmt.Sprintf("void %d", c.Expected)
	case c.Inconclusive:
		return fmt.Sprintf("? %d", c.Checked)
	}
	return fmt.Sprintf("ok %d", c.Checked)
}

// Line is the progress line printed after a scenario.
func (r ScenarioResult) Line() string {
	status := "PASS"
	if r.Failed() {
		status = "FAIL"
	}
	var parts []string
	for _, c := range r.Results {
		parts = append(parts, c.Checker+"="+r.Cell(c.Checker))
	}
	line := fmt.Sprintf("%s %-34s faults=%d ops=%d %s (%v)", status, r.Scenario, r.Injected, r.Ops, strings.Join(parts, " "), r.Took.Round(100*time.Millisecond))
	if r.Err != "" {
		line += " error: " + r.Err
	}
	return line
}

// WriteTable writes the summary table (scenario x invariant) as text.
func (s Summary) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	cols := s.Checkers()
	fmt.Fprintf(tw, "scenario\tfaults\tops\t%s\ttook\terror\n", strings.Join(cols, "\t"))
	for _, r := range s.Scenarios {
		cells := make([]string, len(cols))
		for i, c := range cols {
			cells[i] = r.Cell(c)
		}
		errText := r.Err
		if len(errText) > 60 {
			errText = errText[:57] + "..."
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%v\t%s\n", r.Scenario, r.Injected, r.Ops, strings.Join(cells, "\t"), r.Took.Round(100*time.Millisecond), errText)
	}
	tw.Flush()
	_, err := fmt.Fprintf(w, "seed %d, tier %s: %d scenarios, %d faults injected, %d operations, %d violations, %d errors (%v)\n",
		s.Seed, s.Tier, len(s.Scenarios), s.Injected(), s.Ops(), s.Violations(), s.Errors(), s.Took.Round(time.Second))
	return err
}
