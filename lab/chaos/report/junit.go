package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
)

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
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

// WriteJUnit writes s as JUnit XML: a suite per scenario, with a "run"
// test case timed by the scenario's run (workload under its faults; an
// error when the scenario could not run as scheduled) and a test case per
// checker, timed by the check (failed when it found violations, skipped
// when inconclusive without one).
func WriteJUnit(w io.Writer, s Summary) error {
	var out junitSuites
	for _, r := range s.Scenarios {
		suite := junitSuite{Name: "zkchaos/" + r.Scenario, Time: seconds(r.Took)}
		run := junitCase{Class: "zkchaos." + r.Workload, Name: r.Scenario + " run", Time: seconds(r.Ran)}
		if r.NotApplicable != "" {
			run.Skipped = &junitProblem{Message: "not applicable: " + r.NotApplicable}
		}
		if r.Err != "" {
			run.Error = &junitProblem{Message: "scenario did not run as scheduled", Body: r.Err}
			suite.Errors++
		}
		suite.Cases = append(suite.Cases, run)
		for _, c := range r.Results {
			tc := junitCase{Class: "zkchaos." + r.Workload, Name: r.Scenario + " " + c.Checker, Time: seconds(c.Took)}
			switch {
			case len(c.Violations) > 0:
				var b strings.Builder
				for _, v := range c.Violations {
					fmt.Fprintf(&b, "%s %s\n", v.Client, v.Msg)
				}
				tc.Failure = &junitProblem{Message: fmt.Sprintf("%d violation(s) of %s", len(c.Violations), c.Checker), Body: b.String()}
				suite.Failures++
			case c.Inconclusive:
				tc.Skipped = &junitProblem{Message: c.Note}
			}
			suite.Cases = append(suite.Cases, tc)
		}
		suite.Tests = len(suite.Cases)
		out.Suites = append(out.Suites, suite)
	}
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

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
