package report

import (
	"fmt"
	"strconv"
	"strings"
)

// DefaultReplay is the replay command's prefix when the run did not set
// one (Summary.Replay).
const DefaultReplay = "go run ./lab/cmd/zkchaos"

// ReplayCommand returns the command that replays the named scenarios of
// the run with its seed and flags (Summary.Replay); with no name, the
// whole run (its -scenarios filter, Summary.Select, if it had one).
func (s Summary) ReplayCommand(scenarios ...string) string {
	base := s.Replay
	if base == "" {
		base = DefaultReplay + " -tier " + string(s.Tier)
	}
	cmd := base + " -seed " + strconv.FormatUint(s.Seed, 10)
	sel := s.Select
	if len(scenarios) > 0 {
		sel = strings.Join(scenarios, ",")
	}
	if sel != "" {
		cmd += " -scenarios " + quote(sel)
	}
	return cmd
}

// quote quotes s for a POSIX shell, always (a scenario glob must not
// expand).
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Failing returns the names of the failed scenarios, in order.
func (s Summary) Failing() []string {
	var out []string
	for _, r := range s.Scenarios {
		if r.Failed() {
			out = append(out, r.Scenario)
		}
	}
	return out
}

// FinalLine is the last line of a run: it begins with PASS, NOT EXERCISED
// (no failure, but a scenario tested nothing: see VerdictNotExercised) or
// FAIL (a run cut short or interrupted is a FAIL), then counts or names
// the failing (or not exercised) scenarios (as many as fit in width
// columns, then how many more).
func (s Summary) FinalLine(width int) string {
	ran := len(s.Scenarios) - s.NotApplicable()
	counts := fmt.Sprintf("%d of %d scenarios passed, %d not applicable, %d violations, %d errors, seed %d, %v",
		s.Passed(), ran, s.NotApplicable(), s.Violations(), s.Errors(), s.Seed, s.Took.Round(1e9))
	if nex := s.NotExercised(); nex > 0 {
		counts = strings.Replace(counts, " passed, ", fmt.Sprintf(" passed, %d not exercised, ", nex), 1)
	}
	switch s.Verdict() {
	case VerdictPass:
		return "PASS " + counts
	case VerdictNotExercised:
		// no failure, but not a pass: name what tested nothing
		names := s.NotExercisedNames()
		return clipNames(fmt.Sprintf("NOT EXERCISED %d: ", len(names)), names, width)
	}
	head := "FAIL "
	switch {
	case s.Cut:
		head += fmt.Sprintf("cut short in scenario %d of %d; ", len(s.Scenarios), max(s.Planned, len(s.Scenarios)))
	case !s.Complete():
		head += fmt.Sprintf("incomplete: %d of %d scenarios run; ", len(s.Scenarios), max(s.Planned, len(s.Scenarios)))
	}
	failing := s.Failing()
	switch {
	case len(failing) > 0:
		return clipNames(head+fmt.Sprintf("%d failed: ", len(failing)), failing, width)
	case s.RootErr != "" || len(s.RootLeft) > 0:
		return head + s.RootLine()
	}
	return head + counts
}

// clipNames is head followed by names, comma-separated, cut with ", and
// N more" to fit width (0: no limit), but never before the first name.
func clipNames(head string, names []string, width int) string {
	line := head
	start := len(line)
	for i, name := range names {
		sep := ""
		if i > 0 {
			sep = ", "
		}
		more := ""
		if i+1 < len(names) {
			more = fmt.Sprintf(", and %d more", len(names)-i-1)
		}
		if width > 0 && len(line)+len(sep)+len(name)+len(more) > width && len(line) > start {
			return line + fmt.Sprintf(", and %d more", len(names)-i)
		}
		line += sep + name
	}
	return line
}

// NotExercisedNames names the scenarios that did not fail but were not
// exercised (VerdictNotExercised), in run order.
func (s Summary) NotExercisedNames() []string {
	var out []string
	for _, r := range s.Scenarios {
		if r.Verdict() == VerdictNotExercised {
			out = append(out, r.Scenario)
		}
	}
	return out
}
