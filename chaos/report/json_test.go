package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/faults"
)

// bigSeed is above 2^53: a float64 cannot hold it.
const bigSeed uint64 = 12303875073017278185

// decodeFloat64 decodes summary.json as a JSON tool that knows only
// float64 numbers does (jq 1.6, JavaScript): into map[string]any.
func decodeFloat64(t *testing.T, s Summary) map[string]any {
	t.Helper()
	var b bytes.Buffer
	if err := WriteSummaryJSON(&b, s); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("summary.json: %v\n%s", err, b.String())
	}
	return doc
}

func TestSummaryJSONSeedSurvivesFloat64(t *testing.T) {
	if uint64(float64(bigSeed)) == bigSeed {
		t.Fatalf("seed %d fits a float64: the test proves nothing", bigSeed)
	}
	s := sampleSummary()
	s.Seed = bigSeed
	doc := decodeFloat64(t, s)
	seed, ok := doc["seed"].(string)
	if !ok {
		t.Fatalf("seed is %T, want a string", doc["seed"])
	}
	if back, err := strconv.ParseUint(seed, 10, 64); err != nil || back != bigSeed {
		t.Fatalf("seed %q reads back as %d (%v), want %d", seed, back, err, bigSeed)
	}
	want := "go run ./lab/cmd/zkchaos -tier quick -seed 12303875073017278185"
	if doc["replay"] != want {
		t.Errorf("run's replay %q, want %q", doc["replay"], want)
	}
	for _, sc := range doc["scenarios"].([]any) {
		m := sc.(map[string]any)
		if want := want + " -scenarios '" + m["scenario"].(string) + "'"; m["replay"] != want {
			t.Errorf("replay %q, want %q", m["replay"], want)
		}
	}
}

func TestSummaryJSONFields(t *testing.T) {
	s := sampleSummary() // register/kill-leader passes, lock/cut-short fails
	s.Planned = 3
	na := ScenarioResult{Scenario: "lock/kill-leader", Workload: "lock", Faults: "kill-leader", NotApplicable: "server fault"}
	s.Scenarios = append(s.Scenarios, na)
	doc := decodeFloat64(t, s)
	if doc["schema_version"] != float64(SchemaVersion) || doc["verdict"] != VerdictFail || doc["complete"] != true {
		t.Errorf("schema %v, verdict %v, complete %v", doc["schema_version"], doc["verdict"], doc["complete"])
	}
	if doc["took_seconds"] != 60.0 || doc["session_timeout_seconds"] != 3.0 {
		t.Errorf("durations: took %v, session timeout %v; want seconds", doc["took_seconds"], doc["session_timeout_seconds"])
	}
	if f := doc["failing"].([]any); len(f) != 1 || f[0] != "lock/cut-short" {
		t.Errorf("failing %v", f)
	}
	tot := doc["totals"].(map[string]any)
	if tot["passed"] != 1.0 || tot["failed"] != 1.0 || tot["not_applicable"] != 1.0 || tot["violations"] != 2.0 || tot["planned"] != 3.0 {
		t.Errorf("totals %v", tot)
	}
	scs := doc["scenarios"].([]any)
	verdicts := map[string]any{}
	for _, sc := range scs {
		m := sc.(map[string]any)
		verdicts[m["scenario"].(string)] = m["verdict"]
	}
	if verdicts["register/kill-leader"] != VerdictPass || verdicts["lock/cut-short"] != VerdictFail || verdicts["lock/kill-leader"] != VerdictNotApplicable {
		t.Errorf("verdicts %v", verdicts)
	}
	first := scs[0].(map[string]any)
	if first["took_seconds"] != 12.0 || first["ran_seconds"] != 11.5 || first["history"] != "history/register_kill-leader.json.gz" ||
		first["detail"] != "scenarios/register_kill-leader.html" {
		t.Errorf("scenario: took %v ran %v history %v detail %v", first["took_seconds"], first["ran_seconds"], first["history"], first["detail"])
	}
	checks := scs[1].(map[string]any)["checks"].([]any)
	lin := checks[0].(map[string]any)
	if lin["checker"] != "linearizable" || lin["status"] != string(StatusFail) || len(lin["violations"].([]any)) != 1 {
		t.Errorf("lock/cut-short linearizable: %v", lin)
	}
	if att := doc["attention"].([]any); len(att) == 0 || att[0].(map[string]any)["kind"] != AttnViolation {
		t.Errorf("attention %v: want the violations first", att)
	}
}

// A run still going, or cut short, is "incomplete" until something fails.
func TestSummaryVerdict(t *testing.T) {
	pass := ScenarioResult{Scenario: "a/x", Results: []checkers.Result{{Checker: "c", Checked: 1}}}
	fail := ScenarioResult{Scenario: "a/y", Results: []checkers.Result{{Checker: "c", Checked: 1, Violations: []checkers.Violation{{Msg: "m"}}}}}
	unexercised := ScenarioResult{Scenario: "a/z", Results: []checkers.Result{{Checker: "c", Checked: 1},
		{Checker: "exercised", Checked: 1, Inconclusive: true, Note: "not exercised: latency-near left no traffic trace"}}}
	tests := []struct {
		name string
		s    Summary
		want string
	}{
		{"all planned, passed", Summary{Planned: 1, Scenarios: []ScenarioResult{pass}}, VerdictPass},
		{"no plan given, passed", Summary{Scenarios: []ScenarioResult{pass}}, VerdictPass},
		{"snapshot during the run", Summary{Planned: 1, Partial: true, Scenarios: []ScenarioResult{pass}}, VerdictIncomplete},
		{"cut short", Summary{Planned: 2, Scenarios: []ScenarioResult{pass}}, VerdictIncomplete},
		{"cut short after a failure", Summary{Planned: 3, Scenarios: []ScenarioResult{pass, fail}}, VerdictFail},
		{"cut short in the last scenario", Summary{Planned: 2, Cut: true, Scenarios: []ScenarioResult{pass, pass}}, VerdictIncomplete},
		{"nodes left", Summary{Planned: 1, Scenarios: []ScenarioResult{pass}, Root: "/r", RootLeft: []string{"/r/x"}}, VerdictFail},
		{"one not exercised", Summary{Planned: 2, Scenarios: []ScenarioResult{pass, unexercised}}, VerdictNotExercised},
		{"not exercised and failed", Summary{Planned: 2, Scenarios: []ScenarioResult{unexercised, fail}}, VerdictFail},
		{"not exercised, cut short", Summary{Planned: 3, Scenarios: []ScenarioResult{pass, unexercised}}, VerdictIncomplete},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.Verdict(); got != tt.want {
				t.Fatalf("verdict %q, want %q", got, tt.want)
			}
			// a scenario not exercised is never counted as passed
			for _, r := range tt.s.Scenarios {
				if r.Scenario == unexercised.Scenario && r.Verdict() != VerdictNotExercised {
					t.Errorf("%s: verdict %q", r.Scenario, r.Verdict())
				}
			}
			want := 0
			for _, r := range tt.s.Scenarios {
				if r.Scenario == pass.Scenario {
					want++
				}
			}
			if tt.s.Passed() != want {
				t.Errorf("passed %d, want %d (only a/x passes)", tt.s.Passed(), want)
			}
		})
	}
}

// Windows shows a fault as scheduled and as the history recorded it: a
// heal that waited shows in held_for_seconds.
func TestWindows(t *testing.T) {
	h := newHB(40000).fault("lose-quorum", 1000, 31500).
		target("lose-quorum", 1002, faults.Target{Servers: []faults.ServerTarget{{Index: 1, Role: faults.RoleLeader}}}).build()
	r := ScenarioResult{Scenario: "lock/lose-quorum", History: h, Schedule: faults.Schedule{Windows: []faults.Window{
		{Fault: "lose-quorum", At: 1000 * time.Millisecond, For: 2800 * time.Millisecond},
		{Fault: "lose-quorum", At: 35 * time.Second, For: time.Second}, // never played
	}}}
	ws := Windows(r)
	if len(ws) != 2 {
		t.Fatalf("%d windows, want 2", len(ws))
	}
	w := ws[0]
	if !w.Injected || w.ScheduledFor != 2.8 || *w.InjectedAt != 1 || *w.HealedAt != 31.5 || *w.HeldFor != 30.5 || w.Struck != "server 1 (leader)" {
		t.Errorf("window %+v", w)
	}
	if ws[1].Injected || ws[1].InjectedAt != nil || ws[1].ScheduledAt != 35 {
		t.Errorf("unplayed window %+v", ws[1])
	}
	notInj := newHB(5000).build()
	notInj.Events = append(notInj.Events, faultEvent("kill-leader", 1000, true), faultEvent("kill-leader", 1100, false))
	r2 := ScenarioResult{History: notInj, Schedule: faults.Schedule{Windows: []faults.Window{{Fault: "kill-leader", At: time.Second, For: time.Second}}}}
	if w := Windows(r2)[0]; w.Injected || w.NotInjected == "" || math.Abs(*w.InjectedAt-1) > 1e-9 {
		t.Errorf("window not injected: %+v", w)
	}
}
