package report

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/faults"
	"github.com/zkrecipes/zkrecipes/chaos/history"
)

func sampleSummary() Summary {
	good := newHB(10000).read("c1", "/r", 0, 5, 0).cas("c1", "/r", 0, 1, 6, 9, history.KindOK).
		hold("c2", "/l", 7, 100, 3000).fault("kill-leader", 1000, 4000).read("c2", "/r", 4100, 4200, 1).read("c1", "/r", 4300, 4400, 1).build()
	bad := newHB(10000).cas("c1", "/r", 0, 1, 0, 5, history.KindOK).cas("c2", "/r", 0, 1, 6, 8, history.KindOK).
		hold("c1", "/l", 1, 0, 5000).hold("c2", "/l", 2, 4000, 9000).fault("cut-short", 2000, 2600).build()
	mk := func(name string, h history.History, checkers ...checkers.Checker) ScenarioResult {
		h.Scenario = name
		r := ScenarioResult{Scenario: name, Workload: strings.Split(name, "/")[0], Faults: "x", History: h, Injected: 1, Ops: len(h.Events), Took: 12 * time.Second, Ran: 11500 * time.Millisecond}
		for _, c := range checkers {
			r.Results = append(r.Results, c.Run(h))
		}
		return r
	}
	return Summary{Seed: 42, Tier: faults.TierQuick, Started: time.Now(), Took: time.Minute, SessionTimeout: 3 * time.Second, Clients: 2,
		Scenarios: []ScenarioResult{
			mk("register/kill-leader", good, checkers.Linearizable(time.Second), checkers.Liveness(time.Second)),
			mk("lock/cut-short", bad, checkers.Linearizable(time.Second), checkers.MutualExclusion(1)),
		}}
}

func TestWriteReport(t *testing.T) {
	dir := t.TempDir()
	s := sampleSummary()
	if s.Violations() != 2 || !s.Failed() {
		t.Fatalf("sample has %d violations, want 2", s.Violations())
	}
	if err := Write(dir, s); err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(dir, FileHTML))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"register/kill-leader", "lock/cut-short", `class="bad"`, "seed <b>42</b>", "FAIL", "Needs attention",
		`<a href="scenarios/lock_cut-short.html">lock/cut-short</a>`, "-seed 42 -scenarios &#39;lock/cut-short&#39;"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	if strings.Contains(string(html), "<svg") {
		t.Error("index.html draws a timeline: those belong on the scenarios' pages")
	}
	page, err := os.ReadFile(filepath.Join(dir, DetailFile("lock/cut-short")))
	if err != nil {
		t.Fatal(err)
	}
	if vis, err := os.ReadFile(filepath.Join(dir, VisualFile("lock/cut-short", "linearizable"))); err != nil || !strings.Contains(string(vis), "<html") {
		t.Errorf("porcupine's visualisation of lock/cut-short: %d bytes, %v", len(vis), err)
	}
	for _, want := range []string{"<svg", `class="fault"`, `class="hold"`, "FAIL", `href="../history/lock_cut-short.json.gz"`, `href="../index.html"`,
		`<a href="../scenarios/lock_cut-short.linearizable.porcupine.html">porcupine's visualisation</a>`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the scenario's page lacks %q", want)
		}
	}
	var suites junitSuites
	raw, err := os.ReadFile(filepath.Join(dir, FileJUnit))
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(raw, &suites); err != nil {
		t.Fatalf("junit.xml: %v", err)
	}
	failures := 0
	for _, s := range suites.Suites {
		failures += s.Failures
	}
	if len(suites.Suites) != 3 || failures != 2 || suites.Suites[2].Name != "zkchaos/run" {
		t.Errorf("junit: %d suites, %d failures; want 3 (2 scenarios and the run), 2", len(suites.Suites), failures)
	}
	for _, su := range suites.Suites[:2] {
		if len(su.Cases) == 0 || su.Cases[0].Name != su.Name[len("zkchaos/"):]+" run" || su.Cases[0].Time != "11.500" {
			t.Errorf("junit suite %s: the run case is not first with the run's time: %+v", su.Name, su.Cases)
		}
		if su.Time != "12.000" {
			t.Errorf("junit suite %s: time %s, want 12.000", su.Name, su.Time)
		}
	}
	h, err := history.Load(filepath.Join(dir, HistoryFile("lock/cut-short")))
	if err != nil {
		t.Fatal(err)
	}
	if h.Scenario != "lock/cut-short" || len(h.Events) != len(s.Scenarios[1].History.Events) {
		t.Errorf("history round trip: %q with %d events", h.Scenario, len(h.Events))
	}
	var table strings.Builder
	if err := s.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "1 VIOLATION(S)") || !strings.Contains(table.String(), "2 violations") {
		t.Errorf("table:\n%s", table.String())
	}
	// One table per workload, with only that workload's checkers as columns.
	groups := s.Groups()
	if len(groups) != 2 || groups[0].Workload != "register" || strings.Join(groups[0].Checkers, ",") != "linearizable,liveness" ||
		groups[1].Workload != "lock" || strings.Join(groups[1].Checkers, ",") != "linearizable,mutual-exclusion" {
		t.Errorf("groups: %+v", groups)
	}
	lockTable := table.String()[strings.Index(table.String(), "workload lock"):]
	if !strings.Contains(table.String(), "workload register") || strings.Contains(lockTable, "liveness") || strings.Contains(table.String(), " - ") {
		t.Errorf("table not grouped by workload:\n%s", table.String())
	}
}

func TestHistoryJSONRoundTrip(t *testing.T) {
	rec := history.NewRecorder()
	c := rec.Client("c1")
	op := c.InvokeValue(history.FnCAS, "/r", 0, 1)
	op.OK(1)
	c.Acquired("/l", 9, "")
	c.Released("/l", 9)
	h := rec.History()
	var b strings.Builder
	if err := h.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	got, err := history.Read(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Events) != 4 || got.Clock != history.ClockName || got.Events[0].Kind != history.KindInvoke || got.Events[3].Token != 9 {
		t.Fatalf("round trip: %+v", got)
	}
	if _, err := history.Read(strings.NewReader("{")); err == nil {
		t.Fatal("malformed history read without error")
	}
	ops := history.Operations(got)
	if len(ops) != 1 || ops[0].Result != history.KindOK || ops[0].In != 1 || ops[0].Out != 1 {
		t.Fatalf("operations: %+v", ops)
	}
}
