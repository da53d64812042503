package report

import (
	"fmt"
	"sort"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
)

// Attention is one thing a reader of the run must look at: a failure, an
// error, or a check that passed without proving its invariant in full.
type Attention struct {
	Scenario string `json:"scenario,omitempty"` // "" for the run's own (nodes left under its root)
	Kind     string `json:"kind"`
	Checker  string `json:"checker,omitempty"`
	Text     string `json:"text"`
	Replay   string `json:"replay,omitempty"`
	Detail   string `json:"detail,omitempty"` // the scenario's page, relative to the report directory
}

// Kinds of Attention, most pressing first (the order of Summary.Attention).
const (
	AttnViolation      = "violation"
	AttnError          = "error"
	AttnRoot           = "root"
	AttnNotExercised   = "not-exercised"
	AttnInconclusive   = "inconclusive"
	AttnNegativeMargin = "negative-margin"
	AttnVoided         = "voided"
	AttnCapped         = "capped"
)

var attnOrder = map[string]int{AttnViolation: 0, AttnError: 1, AttnRoot: 2, AttnNotExercised: 3, AttnInconclusive: 4,
	AttnNegativeMargin: 5, AttnVoided: 6, AttnCapped: 7}

// Attention lists what needs attention in s, failures first: violations
// (a line per failing check, with its first violation), errors, nodes
// left under the run's root, then, in passing scenarios too, checks not
// exercised or inconclusive, lease margins of zero or less, voided and
// capped checks. Each scenario's entries carry its replay command and
// its page. A check that had nothing to check (n/a) is not listed: it is
// common (no handoff after a loss) and proves nothing either way.
func (s Summary) Attention() []Attention {
	var out []Attention
	for _, r := range s.Scenarios {
		if r.NotApplicable != "" {
			continue
		}
		add := func(kind, checker, text string) {
			out = append(out, Attention{Scenario: r.Scenario, Kind: kind, Checker: checker, Text: text,
				Replay: s.ReplayCommand(r.Scenario), Detail: DetailFile(r.Scenario)})
		}
		for _, c := range r.Results {
			switch st := StatusOf(c); st {
			case StatusFail:
				add(AttnViolation, c.Checker, fmt.Sprintf("%d violation(s) of %s: %s", len(c.Violations), c.Checker, c.Violations[0].Msg))
			case StatusNotExercised:
				add(AttnNotExercised, c.Checker, c.Checker+" "+Reason(c))
			case StatusInconclusive:
				add(AttnInconclusive, c.Checker, c.Checker+" "+Reason(c))
			case StatusVoided:
				add(AttnVoided, c.Checker, c.Checker+" "+Reason(c))
			case StatusCapped:
				add(AttnCapped, c.Checker, c.Checker+" "+Reason(c))
			}
		}
		if r.Err != "" {
			add(AttnError, "", "did not run as scheduled: "+r.Err)
		}
		// (a failing lease-margin check is listed above with its violations)
		if lm, ok := r.Result(checkers.LeaseMarginName); ok && StatusOf(lm) != StatusFail && r.Margins > 0 && r.MarginMin <= 0 {
			add(AttnNegativeMargin, checkers.LeaseMarginName, fmt.Sprintf("smallest lease margin %v over %d handoff(s): two clients held at once (%s)",
				r.MarginMin.Round(time.Millisecond), r.Margins, r.MarginCell()))
		}
	}
	if s.RootErr != "" || len(s.RootLeft) > 0 {
		out = append(out, Attention{Kind: AttnRoot, Text: s.RootLine()})
	}
	sort.SliceStable(out, func(i, j int) bool { return attnOrder[out[i].Kind] < attnOrder[out[j].Kind] })
	return out
}
