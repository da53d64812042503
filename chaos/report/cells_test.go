package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
)

func TestStatusAndCells(t *testing.T) {
	viol := []checkers.Violation{{Msg: "two holders"}}
	tests := []struct {
		name   string
		c      checkers.Result
		status Status
		cell   string
		class  string
		reason string // a part of Reason
	}{
		{"pass", checkers.Result{Checker: "fencing", Checked: 12}, StatusPass, "ok 12", "good", ""},
		{"violation", checkers.Result{Checker: "fencing", Checked: 12, Violations: viol}, StatusFail, "1 VIOLATION(S)", "bad", ""},
		{"nothing checked reads n/a, not green", checkers.Result{Checker: "lease-margin"}, StatusEmpty, "n/a", "na", "nothing to check"},
		{"capped is amber, with both counts", checkers.Result{Checker: "linearizable", Checked: 3000, Of: 4072, Note: "/r: first 3000 of 4072 operations checked (cap 3000)"},
			StatusCapped, "3000/4072", "warn", "capped: 3000 of 4072 items checked: /r: first 3000"},
		{"voided names its fault", checkers.Result{Checker: "mutual-exclusion", Checked: 9, Voided: true, VoidedBy: "freeze-client", Expected: 2,
			Note: "2 finding(s) expected under freeze-client, not counted: c1 and c2"}, StatusVoided, "void 2 (freeze-client)", "void", "voided: 2 finding(s) expected under freeze-client"},
		{"inconclusive", checkers.Result{Checker: "linearizable", Checked: 40, Inconclusive: true, Note: "search timed out"}, StatusInconclusive, "? 40", "warn", "inconclusive: search timed out"},
		{"not exercised", checkers.Result{Checker: "throughput", Checked: 3, Inconclusive: true, Note: "3 operations before the fault"}, StatusNotExercised, "not exercised", "warn", "not exercised: 3 operations"},
		{"not exercised, said once", checkers.Result{Checker: "exercised", Checked: 1, Inconclusive: true, Note: "not exercised: no trace"}, StatusNotExercised, "not exercised", "warn", "not exercised: no trace"},
		{"a timed out search is a failure first", checkers.Result{Checker: "linearizable", Checked: 40, Inconclusive: true, Violations: viol}, StatusFail, "1 VIOLATION(S)", "bad", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ScenarioResult{Results: []checkers.Result{tt.c}}
			if got := StatusOf(tt.c); got != tt.status {
				t.Errorf("status %q, want %q", got, tt.status)
			}
			if got := r.Cell(tt.c.Checker); got != tt.cell {
				t.Errorf("cell %q, want %q", got, tt.cell)
			}
			if got := r.CellClass(tt.c.Checker); got != tt.class {
				t.Errorf("class %q, want %q", got, tt.class)
			}
			got := Reason(tt.c)
			if (tt.reason == "") != (got == "") || !strings.Contains(got, tt.reason) || strings.Count(got, "not exercised") > 1 {
				t.Errorf("reason %q, want %q", got, tt.reason)
			}
		})
	}
	if r := (ScenarioResult{}); r.Cell("fencing") != "-" || r.CellClass("fencing") != "na" {
		t.Errorf("a checker not run: %q %q", r.Cell("fencing"), r.CellClass("fencing"))
	}
}

func TestMarginCell(t *testing.T) {
	lm := func(c checkers.Result) []checkers.Result {
		c.Checker = checkers.LeaseMarginName
		return []checkers.Result{c}
	}
	tests := []struct {
		name string
		r    ScenarioResult
		want string
	}{
		{"no lease-margin check (a semaphore): n/a", ScenarioResult{Margins: 1, MarginMin: -1200 * time.Millisecond}, "n/a"},
		{"no handoff", ScenarioResult{Results: lm(checkers.Result{})}, "none"},
		{"positive", ScenarioResult{Results: lm(checkers.Result{Checked: 2}), Margins: 2, MarginMin: 1370 * time.Millisecond, MarginMedian: 2 * time.Second}, "1.37s/2s"},
		{"overlap, voided", ScenarioResult{Results: lm(checkers.Result{Checked: 1, Voided: true, VoidedBy: "freeze-client"}), Margins: 1,
			MarginMin: -200 * time.Millisecond, MarginMedian: -200 * time.Millisecond}, "-200ms/-200ms overlap (voided)"},
		{"overlap, failed", ScenarioResult{Results: lm(checkers.Result{Checked: 1, Violations: []checkers.Violation{{Msg: "m"}}}), Margins: 1,
			MarginMin: -200 * time.Millisecond, MarginMedian: -200 * time.Millisecond}, "-200ms/-200ms overlap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.MarginCell(); got != tt.want {
				t.Fatalf("margin cell %q, want %q", got, tt.want)
			}
		})
	}
}

// notProving is a scenario that passes with a check of each kind that
// proves less than its invariant.
func notProving() ScenarioResult {
	return ScenarioResult{Scenario: "lock-proc/freeze-client", Workload: "lock-proc", Faults: "freeze-client", Took: 2 * time.Second, Ran: time.Second,
		Results: []checkers.Result{
			{Checker: "fencing", Checked: 10},
			{Checker: "mutual-exclusion", Checked: 9, Voided: true, VoidedBy: "freeze-client", Expected: 1, Note: "1 finding(s) expected under freeze-client, not counted: overlap"},
			{Checker: "linearizable", Checked: 3000, Of: 4072},
			{Checker: "no-nodes-left"},
			{Checker: "lease-margin", Checked: 1, Voided: true, VoidedBy: "freeze-client"},
			{Checker: "throughput", Checked: 2, Inconclusive: true, Note: "2 operations before the fault"},
		}, Margins: 1, MarginMin: -time.Second, MarginMedian: -time.Second}
}

// JUnit: a check that did not prove its invariant in full is skipped with
// its reason, never passed; the seed and the replay command are
// properties.
func TestJUnitSkipsWhatProvesNothing(t *testing.T) {
	s := Summary{Seed: bigSeed, Tier: "quick", Planned: 1, Scenarios: []ScenarioResult{notProving()}}
	var b bytes.Buffer
	if err := WriteJUnit(&b, s); err != nil {
		t.Fatal(err)
	}
	var got junitSuites
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("junit.xml: %v\n%s", err, b.String())
	}
	suite := got.Suites[0]
	props := map[string]string{}
	for _, p := range suite.Properties {
		props[p.Name] = p.Value
	}
	if props["seed"] != "12303875073017278185" || props["replay"] != "go run ./lab/cmd/zkchaos -tier quick -seed 12303875073017278185 -scenarios 'lock-proc/freeze-client'" {
		t.Errorf("properties %v", props)
	}
	want := map[string]string{ // case -> skipped message part; "" = passed
		"lock-proc/freeze-client run":              "",
		"lock-proc/freeze-client fencing":          "",
		"lock-proc/freeze-client mutual-exclusion": "voided: 1 finding(s) expected under freeze-client",
		"lock-proc/freeze-client linearizable":     "capped: 3000 of 4072",
		"lock-proc/freeze-client no-nodes-left":    "nothing to check",
		"lock-proc/freeze-client lease-margin":     "voided by freeze-client",
		"lock-proc/freeze-client throughput":       "not exercised",
	}
	for _, c := range suite.Cases {
		part, ok := want[c.Name]
		if !ok {
			t.Errorf("unexpected case %q", c.Name)
			continue
		}
		delete(want, c.Name)
		switch {
		case c.Failure != nil || c.Error != nil:
			t.Errorf("%s failed: %+v %+v", c.Name, c.Failure, c.Error)
		case part == "" && c.Skipped != nil:
			t.Errorf("%s skipped (%s), want passed", c.Name, c.Skipped.Message)
		case part != "" && (c.Skipped == nil || !strings.Contains(c.Skipped.Message, part)):
			t.Errorf("%s: skipped %+v, want a skip saying %q", c.Name, c.Skipped, part)
		}
	}
	if len(want) > 0 {
		t.Errorf("cases missing: %v", want)
	}
	if suite.Skipped != 5 || suite.Failures != 0 || suite.Tests != 7 || got.Skipped != 5 {
		t.Errorf("counts: suite %d tests %d skipped %d failures, all %d skipped", suite.Tests, suite.Skipped, suite.Failures, got.Skipped)
	}
	run := got.Suites[1]
	if run.Name != "zkchaos/run" || run.Errors != 0 || run.Cases[0].Name != "complete" {
		t.Errorf("run suite %+v", run)
	}
}

func TestAttention(t *testing.T) {
	s := sampleSummary() // lock/cut-short fails
	s.Scenarios = append([]ScenarioResult{notProving()}, s.Scenarios...)
	s.Scenarios = append(s.Scenarios, ScenarioResult{Scenario: "queue/kill-leader", Workload: "queue", Err: "kill-leader: no leader"})
	as := s.Attention()
	var kinds []string
	for _, a := range as {
		kinds = append(kinds, a.Kind+" "+a.Scenario)
		if a.Replay != s.ReplayCommand(a.Scenario) || a.Detail != DetailFile(a.Scenario) {
			t.Errorf("%+v: want its replay command and page", a)
		}
	}
	want := []string{
		"violation lock/cut-short", "violation lock/cut-short", "error queue/kill-leader",
		"not-exercised lock-proc/freeze-client", "negative-margin lock-proc/freeze-client",
		"voided lock-proc/freeze-client", "voided lock-proc/freeze-client", "capped lock-proc/freeze-client",
	}
	if strings.Join(kinds, "; ") != strings.Join(want, "; ") {
		t.Errorf("attention:\n%s\nwant\n%s", strings.Join(kinds, "\n"), strings.Join(want, "\n"))
	}
	var html bytes.Buffer
	if err := WriteHTML(&html, s); err != nil {
		t.Fatal(err)
	}
	page := html.String()
	at, table := strings.Index(page, "Needs attention"), strings.Index(page, "Summary by workload")
	if at < 0 || table < at {
		t.Fatalf("needs attention at %d, the tables at %d: want it first", at, table)
	}
	for _, want := range []string{`title="voided: 1 finding(s) expected under freeze-client`, `class="warn" title="capped: 3000 of 4072`, ">3000/4072<",
		">void 1 (freeze-client)<", `<td class="na" title="nothing to check: 0 items">n/a</td>`, "-1s/-1s overlap (voided)"} {
		if !strings.Contains(page, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
}

func TestProgressLine(t *testing.T) {
	long := strings.Repeat("x", 300)
	fail := ScenarioResult{Scenario: "partitioner/isolate-holder-follower-out", Took: 19 * time.Second, Ops: 12345, Err: long,
		Results: []checkers.Result{{Checker: "mutual-exclusion", Violations: []checkers.Violation{{Msg: "m"}}}, {Checker: "fencing", Checked: 3}}}
	tests := []struct {
		name string
		r    ScenarioResult
		p    Progress
		want []string
	}{
		{"pass", ScenarioResult{Scenario: "lock/kill-leader", Took: 12100 * time.Millisecond, Ops: 4175}, Progress{N: 3, Of: 14, Elapsed: 41 * time.Second, Left: 130 * time.Second},
			[]string{"[ 3/14] PASS lock/kill-leader ", "12.1s", "4175 ops", "elapsed 41s, ~2m10s left"}},
		{"fail names its checker and is cut", fail, Progress{N: 85, Of: 85, Elapsed: time.Hour, Left: 0},
			[]string{"[85/85] FAIL partitioner/isolate-holder-follower-out", "elapsed 1h0m0s: mutual-exclusion: 1 violation", "..."}},
		{"not applicable", ScenarioResult{Scenario: "lock/kill-leader", NotApplicable: "server fault: " + long}, Progress{N: 1, Of: 2, Left: -1},
			[]string{"N/A  lock/kill-leader", "left unknown", "not applicable: server fault"}},
		{"not exercised says so and why", ScenarioResult{Scenario: "rwlock/latency-near", Results: []checkers.Result{{Checker: "mutual-exclusion", Checked: 9},
			{Checker: "exercised", Checked: 1, Inconclusive: true, Note: "not exercised: latency-near left no traffic trace"}}}, Progress{N: 2, Of: 2},
			[]string{"[2/2] NOT EXERCISED rwlock/latency-near", "elapsed 0s: exercised: not exercised"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := tt.r.ProgressLine(tt.p)
			if n := utf8.RuneCountInString(line); n > ConsoleWidth {
				t.Errorf("%d columns: %q", n, line)
			}
			for _, w := range tt.want {
				if !strings.Contains(line, w) {
					t.Errorf("%q lacks %q", line, w)
				}
			}
		})
	}
}

func TestEstimate(t *testing.T) {
	ran := ScenarioResult{Took: 10 * time.Second}
	na := ScenarioResult{NotApplicable: "server fault"}
	tests := []struct {
		name    string
		done    []ScenarioResult
		planned int
		want    time.Duration
	}{
		{"nothing ran yet", nil, 4, -1},
		{"only not applicable so far", []ScenarioResult{na}, 4, -1},
		{"mean of those that ran", []ScenarioResult{ran, {Took: 20 * time.Second}}, 4, 30 * time.Second},
		{"not applicable ones in proportion", []ScenarioResult{ran, na}, 4, 10 * time.Second},
		{"over", []ScenarioResult{ran}, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Estimate(tt.done, tt.planned); got != tt.want {
				t.Fatalf("estimate %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFinalLine(t *testing.T) {
	pass := ScenarioResult{Scenario: "lock/kill-leader", Results: []checkers.Result{{Checker: "c", Checked: 1}}}
	failing := func(name string) ScenarioResult {
		return ScenarioResult{Scenario: name, Results: []checkers.Result{{Checker: "c", Violations: []checkers.Violation{{Msg: "m"}}}}}
	}
	unexercised := ScenarioResult{Scenario: "rwlock/latency-near", Results: []checkers.Result{{Checker: "c", Checked: 1},
		{Checker: "throughput", Checked: 1, Inconclusive: true, Note: "not exercised: 3 operations"}}}
	var many []ScenarioResult
	for i := 0; i < 30; i++ {
		many = append(many, failing("semaphore-max/isolate-holder-follower-"+strings.Repeat("x", i%3)))
	}
	tests := []struct {
		name   string
		s      Summary
		prefix string
		want   []string
	}{
		{"pass", Summary{Seed: 7, Planned: 1, Scenarios: []ScenarioResult{pass}}, "PASS ", []string{"1 of 1 scenarios passed", "seed 7"}},
		{"fail names them", Summary{Seed: 7, Planned: 3, Scenarios: []ScenarioResult{pass, failing("lock/cut-short"), failing("leader/half-open")}}, "FAIL ",
			[]string{"2 failed: lock/cut-short, leader/half-open"}},
		{"many failing: as many as fit", Summary{Planned: 30, Scenarios: many}, "FAIL 30 failed: semaphore-max/", []string{"more"}},
		{"scenarios missing", Summary{Seed: 7, Planned: 5, Scenarios: []ScenarioResult{pass}}, "FAIL incomplete: 1 of 5 scenarios run", nil},
		{"cut short", Summary{Seed: 7, Planned: 3, Cut: true, Scenarios: []ScenarioResult{pass, pass, {Scenario: "lock/slicer", Err: "context canceled"}}},
			"FAIL cut short in scenario 3 of 3; 1 failed: lock/slicer", nil},
		{"nodes left", Summary{Planned: 1, Scenarios: []ScenarioResult{pass}, Root: "/r", RootLeft: []string{"/r/x"}}, "FAIL root /r: 1 nodes LEFT", nil},
		{"not exercised is no pass", Summary{Planned: 2, Scenarios: []ScenarioResult{pass, unexercised}}, "NOT EXERCISED 1: rwlock/latency-near", nil},
		{"a failure outranks it", Summary{Planned: 2, Scenarios: []ScenarioResult{unexercised, failing("lock/cut-short")}}, "FAIL 1 failed: lock/cut-short", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := tt.s.FinalLine(ConsoleWidth)
			if !strings.HasPrefix(line, tt.prefix) || len(line) > ConsoleWidth && len(tt.s.Failing()) > 1 {
				t.Errorf("%q: want it to begin %q, within %d columns", line, tt.prefix, ConsoleWidth)
			}
			for _, w := range tt.want {
				if !strings.Contains(line, w) {
					t.Errorf("%q lacks %q", line, w)
				}
			}
		})
	}
}

func TestReplayCommand(t *testing.T) {
	tests := []struct {
		name      string
		s         Summary
		scenarios []string
		want      string
	}{
		{"default, the run", Summary{Seed: 5, Tier: "full"}, nil, "go run ./lab/cmd/zkchaos -tier full -seed 5"},
		{"the run's filter", Summary{Seed: 5, Replay: "zkchaos -tier quick -secure", Select: "lock/*"}, nil, "zkchaos -tier quick -secure -seed 5 -scenarios 'lock/*'"},
		{"one scenario", Summary{Seed: 5, Replay: "zkchaos -tier quick", Select: "lock/*"}, []string{"lock/cut-short"}, "zkchaos -tier quick -seed 5 -scenarios 'lock/cut-short'"},
		{"a quote in a name", Summary{Seed: 5, Replay: "z"}, []string{"a'b"}, `z -seed 5 -scenarios 'a'\''b'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.ReplayCommand(tt.scenarios...); got != tt.want {
				t.Fatalf("%q, want %q", got, tt.want)
			}
		})
	}
}
