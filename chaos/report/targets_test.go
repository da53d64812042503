package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/faults"
)

// The report shows each fault's target (timeline, summary) and the margins
// (summary table, HTML, summary.json); a not-exercised fault counts.
func TestReportTargetsAndMargins(t *testing.T) {
	tg := faults.Target{Aim: faults.RoleHolder, Client: "c1", ClientRole: faults.RoleHolder, Servers: []faults.ServerTarget{{Index: 2, Role: faults.RoleFollower}}}
	h := newHB(9000).hold("c1", "/l", 1, 0, -1).fault("partition-expire", 1000, 2000).target("partition-expire", 1001, tg).
		lost("c1", "/l", 1, 2500).hold("c2", "/l", 2, 2750, 3000).build()
	h.Scenario = "lock/partition-expire"
	r := ScenarioResult{Scenario: h.Scenario, Workload: "lock", Faults: "partition-expire", History: h, Injected: 1, Targets: faults.Targets(h)}
	r.Margins, r.MarginMin, r.MarginMedian = checkers.MarginStats(checkers.LeaseMargins(h))
	for _, c := range []checkers.Checker{checkers.LeaseMargin(), checkers.Exercised(time.Second, faults.TierQuick)} {
		r.Results = append(r.Results, c.Run(h))
	}
	idle := newHB(9000).fault("kill-follower", 1000, 2000).build()
	idle.Scenario = "register/kill-follower"
	r2 := ScenarioResult{Scenario: idle.Scenario, Workload: "register", Faults: "kill-follower", History: idle, Injected: 1}
	r2.Results = append(r2.Results, checkers.Exercised(time.Second, faults.TierQuick).Run(idle))
	s := Summary{Seed: 1, Tier: faults.TierQuick, Started: time.Now(), Scenarios: []ScenarioResult{r, r2}}

	if len(r.Targets) != 1 || r.Targets[0].Client != "c1" || r.Targets[0].Servers[0].Index != 2 || r.Targets[0].At != 1001*ms {
		t.Fatalf("targets: %+v", r.Targets)
	}
	if r.Margins != 1 || r.MarginMin != 250*time.Millisecond {
		t.Fatalf("margins %d min %v", r.Margins, r.MarginMin)
	}
	if s.NotExercised() != 1 || r2.Cell("exercised") != "not exercised" {
		t.Fatalf("not exercised: %d, cell %q", s.NotExercised(), r2.Cell("exercised"))
	}
	var table strings.Builder
	if err := s.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"margin min/median", "250ms/250ms", "client c1 (holder) on server 2 (follower)", "1 not exercised"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	dir := t.TempDir()
	if err := Write(dir, s); err != nil {
		t.Fatal(err)
	}
	html, _ := os.ReadFile(filepath.Join(dir, FileHTML))
	for _, want := range []string{"250ms/250ms", "margin"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	page, _ := os.ReadFile(filepath.Join(dir, DetailFile(r.Scenario)))
	for _, want := range []string{"partition-expire: client c1 (holder) on server 2 (follower)", "250ms/250ms"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the scenario's page lacks %q", want)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(dir, FileSummary))
	var back struct {
		Scenarios []struct {
			Targets []struct {
				ClientRole string  `json:"client_role"`
				Struck     string  `json:"struck"`
				At         float64 `json:"at_seconds"`
			} `json:"targets"`
			Margins *struct {
				Count int     `json:"count"`
				Min   float64 `json:"min_seconds"`
			} `json:"lease_margins"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	got := back.Scenarios[0]
	if len(got.Targets) != 1 || got.Targets[0].ClientRole != faults.RoleHolder || got.Targets[0].At != 1.001 ||
		got.Targets[0].Struck != "client c1 (holder) on server 2 (follower)" || got.Margins == nil || got.Margins.Count != 1 || got.Margins.Min != 0.25 {
		t.Fatalf("summary.json scenario: %+v", got)
	}
	if back.Scenarios[1].Margins != nil {
		t.Errorf("a workload without a lease-margin check has margins in summary.json: %+v", back.Scenarios[1].Margins)
	}
}
