package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Name    string       `xml:"name,attr"`
	Tests   int          `xml:"tests,attr"`
	Fails   int          `xml:"failures,attr"`
	Errors  int          `xml:"errors,attr"`
	Skipped int          `xml:"skipped,attr"`
	Time    string       `xml:"time,attr"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Class   string        `xml:"classname,attr"`
	Name    string        `xml:"name,attr"`
	Time    string        `xml:"time,attr"`
	Failure *junitProblem `xml:"failure,omitempty"`
	Error   *junitProblem `xml:"error,omitempty"`
	Skipped *junitProblem `xml:"skipped,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes s as JUnit XML: a suite per scenario, with the seed,
// the tier and the scenario's replay command as properties, a "run" test
// case timed by the scenario's run (workload under its faults; an error
// when the scenario could not run as scheduled, skipped when it was not
// applicable) and a test case per checker, timed by the check: failed
// when it found violations, skipped, with the reason, when it did not
// prove its invariant in full (voided by the fault, capped, inconclusive,
// not exercised, nothing to check; see Reason), else passed.
func WriteJUnit(w io.Writer, s Summary) error {
	out := junitSuites{Name: "zkchaos seed " + strconv.FormatUint(s.Seed, 10), Time: seconds(s.Took)}
	for _, r := range s.Scenarios {
		suite := junitSuite{Name: "zkchaos/" + r.Scenario, Time: seconds(r.Took), Properties: []junitProperty{
			{Name: "seed", Value: strconv.FormatUint(s.Seed, 10)},
			{Name: "tier", Value: string(s.Tier)},
			{Name: "faults", Value: r.Faults},
			{Name: "verdict", Value: r.Verdict()},
			{Name: "replay", Value: s.ReplayCommand(r.Scenario)},
		}}
		run := junitCase{Class: "zkchaos." + r.Workload, Name: r.Scenario + " run", Time: seconds(r.Ran)}
		if r.NotApplicable != "" {
			run.Skipped = &junitProblem{Message: "not applicable: " + r.NotApplicable}
			suite.Skipped++
		}
		if r.Err != "" {
			run.Error = &junitProblem{Message: "scenario did not run as scheduled", Body: r.Err}
			suite.Errors++
		}
		suite.Cases = append(suite.Cases, run)
		for _, c := range r.Results {
			tc := junitCase{Class: "zkchaos." + r.Workload, Name: r.Scenario + " " + c.Checker, Time: seconds(c.Took)}
			switch StatusOf(c) {
			case StatusFail:
				var b strings.Builder
				for _, v := range c.Violations {
					fmt.Fprintf(&b, "%s %s\n", v.Client, v.Msg)
				}
				tc.Failure = &junitProblem{Message: fmt.Sprintf("%d violation(s) of %s", len(c.Violations), c.Checker), Body: b.String()}
				suite.Failures++
			case StatusPass:
			default:
				tc.Skipped = &junitProblem{Message: Reason(c)}
				suite.Skipped++
			}
			suite.Cases = append(suite.Cases, tc)
		}
		out.add(suite)
	}
	out.add(runSuite(s))
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", " ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func (out *junitSuites) add(suite junitSuite) {
	suite.Tests = len(suite.Cases)
	out.Tests += suite.Tests
	out.Fails += suite.Failures
	out.Errors += suite.Errors
	out.Skipped += suite.Skipped
	out.Suites = append(out.Suites, suite)
}

// runSuite is the run's own suite, "zkchaos/run", with the run's replay
// command: a "complete" case, an error while the run is not complete (a
// snapshot written during the run, a run cut short), and, when the run
// kept its nodes under a root, a "root removed" case, failed when nodes
// were left or the root could not be listed.
func runSuite(s Summary) junitSuite {
	suite := junitSuite{Name: "zkchaos/run", Time: seconds(s.Took), Properties: []junitProperty{
		{Name: "seed", Value: strconv.FormatUint(s.Seed, 10)},
		{Name: "tier", Value: string(s.Tier)},
		{Name: "verdict", Value: s.Verdict()},
		{Name: "replay", Value: s.ReplayCommand()},
	}}
	complete := junitCase{Class: "zkchaos.run", Name: "complete", Time: seconds(s.Took)}
	if !s.Complete() {
		msg := fmt.Sprintf("run incomplete: %d of %d scenarios played", len(s.Scenarios), max(s.Planned, len(s.Scenarios)))
		if s.Cut {
			msg = fmt.Sprintf("run incomplete: cut short in scenario %d of %d", len(s.Scenarios), max(s.Planned, len(s.Scenarios)))
		}
		complete.Error = &junitProblem{Message: msg}
		suite.Errors++
	}
	suite.Cases = append(suite.Cases, complete)
	if s.Root != "" && !s.Partial {
		root := junitCase{Class: "zkchaos.run", Name: "root removed", Time: "0.000"}
		if s.RootErr != "" || len(s.RootLeft) > 0 {
			root.Failure = &junitProblem{Message: s.RootLine(), Body: strings.Join(s.RootLeft, "\n")}
			suite.Failures++
		}
		suite.Cases = append(suite.Cases, root)
	}
	return suite
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
