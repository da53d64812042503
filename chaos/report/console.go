package report

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// ConsoleWidth is the most columns a progress line takes.
const ConsoleWidth = 120

// Progress is where a run stands after a scenario: its number (from 1)
// among Of, the time since the run began, and an estimate of what is left.
type Progress struct {
	N, Of   int
	Elapsed time.Duration
	Left    time.Duration // negative: no estimate yet
}

// Estimate returns the time left for the scenarios still to run, from the
// mean time of those that ran (not the not-applicable ones, which take no
// time), or -1 when none ran yet.
func Estimate(done []ScenarioResult, planned int) time.Duration {
	var took time.Duration
	ran, na := 0, 0
	for _, r := range done {
		if r.NotApplicable != "" {
			na++
			continue
		}
		ran++
		took += r.Took
	}
	if ran == 0 {
		return -1
	}
	left := planned - len(done)
	if left <= 0 {
		return 0
	}
	// The remaining scenarios are assumed not applicable in the same
	// proportion as so far.
	runs := float64(left) * float64(ran) / float64(ran+na)
	return time.Duration(runs * float64(took) / float64(ran))
}

// ProgressLine is the line printed after a scenario, at most ConsoleWidth
// columns: "[ 3/14] PASS lock/kill-leader  12.1s   4175 ops, elapsed 41s,
// ~2m10s left", then, for a failure, what failed (each failing checker
// and the error, cut to fit), for a scenario not run, why.
func (r ScenarioResult) ProgressLine(p Progress) string {
	left := ", ~" + shortDuration(p.Left) + " left"
	switch {
	case p.N >= p.Of:
		left = ""
	case p.Left < 0:
		left = ", left unknown"
	}
	status := "PASS"
	switch {
	case r.NotApplicable != "":
		status = "N/A "
	case r.Failed():
		status = "FAIL"
	case r.Verdict() == VerdictNotExercised:
		status = "NOT EXERCISED" // wider than the others: it must stand out
	}
	width := len(fmt.Sprint(p.Of))
	line := fmt.Sprintf("[%*d/%d] %s %-30s %5s %6d ops, elapsed %s%s", width, p.N, p.Of, status, r.Scenario,
		shortDuration(r.Took), r.Ops, shortDuration(p.Elapsed), left)
	var why []string
	switch {
	case r.NotApplicable != "":
		why = append(why, "not applicable: "+r.NotApplicable)
	case r.Failed():
		for _, c := range r.Results {
			if StatusOf(c) == StatusFail {
				why = append(why, fmt.Sprintf("%s: %d violation(s)", c.Checker, len(c.Violations)))
			}
		}
		if r.Err != "" {
			why = append(why, "error: "+r.Err)
		}
	case r.Verdict() == VerdictNotExercised:
		for _, c := range r.Results {
			if StatusOf(c) == StatusNotExercised {
				why = append(why, c.Checker+": "+Reason(c))
			}
		}
	}
	if len(why) > 0 {
		line += ": " + strings.Join(why, "; ")
	}
	return Clip(line, ConsoleWidth)
}

// Clip cuts s to at most width columns (runes), ending with "..." when
// cut; a line break ends it.
func Clip(s string, width int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " ..."
	}
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	rs := []rune(s)
	return string(rs[:width-3]) + "..."
}

// shortDuration is d to a tenth of a second under a minute, to the second
// above it.
func shortDuration(d time.Duration) string {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
