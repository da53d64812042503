package chaos

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/faults"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/chaos/report"
	"github.com/zkrecipes/zkrecipes/chaos/workloads"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// mutantVerdicts runs the scenarios of cases (the mutant's and the twin's
// under each fault, and the mutant's under each mild fault) and reports,
// through t, every mutant scenario that no expected checker caught and
// every twin or mild scenario that failed or was not exercised (a pass
// that tested nothing proves nothing: the fault must strike a running
// workload and leave its trace). It returns
// one line per scenario: name, verdict, checkers that fired, violations.
func mutantVerdicts(ctx context.Context, t testing.TB, r *Runner, cases []workloads.MutantCase) []string {
	t.Helper()
	var scs []Scenario
	catch := map[string][]string{}
	twins := map[string]bool{}
	for _, mc := range cases {
		ms, ts := mc.Scenarios()
		for i, f := range mc.Faults {
			fault, err := faults.ByName(f)
			if err != nil {
				t.Fatal(err)
			}
			scs = append(scs, Scenario{Name: ms[i], Workload: mc.Mutant, Faults: []faults.Fault{fault}},
				Scenario{Name: ts[i], Workload: mc.Twin, Faults: []faults.Fault{fault}})
			catch[ms[i]] = mc.Catch
			twins[ts[i]] = true
		}
		for _, f := range mc.Mild {
			fault, err := faults.ByName(f)
			if err != nil {
				t.Fatal(err)
			}
			name := mc.Mutant.Name() + "/" + f
			scs = append(scs, Scenario{Name: name, Workload: mc.Mutant, Faults: []faults.Fault{fault}})
			twins[name] = true // must pass, as a twin does
		}
	}
	sum, err := r.Run(ctx, scs)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, sc := range sum.Scenarios {
		var fired []string
		for _, c := range sc.Results {
			if len(c.Violations) > 0 {
				fired = append(fired, fmt.Sprintf("%s:%d", c.Checker, len(c.Violations)))
			}
		}
		lines = append(lines, fmt.Sprintf("%-40s failed=%-5v verdict=%-13s %s err=%q", sc.Scenario, sc.Failed(), sc.Verdict(), strings.Join(fired, ","), sc.Err))
		if twins[sc.Scenario] {
			switch {
			case sc.Failed():
				t.Errorf("%s must pass: %s", sc.Scenario, sc.Line())
				for _, c := range sc.Results {
					for _, v := range c.Violations {
						t.Logf("  %s: %s %s", c.Checker, v.Client, v.Msg)
					}
				}
			case sc.Verdict() == report.VerdictNotExercised:
				// a twin's or a mild scenario's pass is evidence only if
				// its fault struck a running workload and left its trace
				t.Errorf("%s must pass, and was not exercised: %s", sc.Scenario, sc.Line())
				for _, c := range sc.Results {
					if c.Inconclusive {
						t.Logf("  %s: %s", c.Checker, c.Note)
					}
				}
			}
			continue
		}
		caught := false
		for _, name := range catch[sc.Scenario] {
			if c, ok := sc.Result(name); ok && len(c.Violations) > 0 {
				caught = true
				t.Logf("%s caught by %s (%d): %s", sc.Scenario, c.Checker, len(c.Violations), c.Violations[0].Msg)
			}
		}
		if !caught {
			t.Errorf("mutant %s not caught by %v: %s", sc.Scenario, catch[sc.Scenario], sc.Line())
			for _, hd := range history.Holdings(sc.History) {
				t.Logf("  holding %s %s %s %d %s..%s %s", hd.Client, hd.Key, hd.Mode, hd.Token, history.Rel(sc.History, hd.From), history.Rel(sc.History, hd.To), hd.Ended)
			}
			// the nemesis's events, and every event of a struck client
			// from half a second before each fault to a session timeout
			// after its heal: what the target was doing when struck
			struck := map[string]bool{}
			for _, tg := range faults.Targets(sc.History) {
				struck[tg.Client] = true
			}
			ws := checkers.FaultWindows(sc.History)
			near := func(at int64) bool {
				for _, w := range ws {
					if at >= w.Start-int64(500*time.Millisecond) && at <= w.End+int64(r.Config().SessionTimeout) {
						return true
					}
				}
				return false
			}
			for _, e := range sc.History.Events {
				if e.Client == history.Nemesis || struck[e.Client] && near(e.Time) {
					t.Logf("  %s %s %s %s %s %d", history.Rel(sc.History, e.Time), e.Client, e.Kind, e.Key, e.Detail, e.Value)
				}
			}
		}
	}
	return lines
}

// mutantConfig is e2eConfig with zkchaos's quick-tier duration (four
// session timeouts): a target that holds for three session timeouts
// without a fault (lock-stepdown, leader-owner) must let the bystanders
// progress after the heal before the scenario ends.
func mutantConfig(t testing.TB, seed uint64) Config {
	cfg := e2eConfig(t, seed)
	cfg.Duration = 4 * cfg.SessionTimeout
	return cfg
}

// TestMutants runs every mutant and its twin under the mutant's faults, for
// the seeds in ZKCHAOS_MUTANT_SEEDS (comma-separated, default 1), when
// ZKCHAOS_MUTANTS names them ("all" or a comma-separated list of mutant
// workload names): the tool behind the mutants' verdict table and their
// seed-robustness. TestEndToEnd runs two of them in every run.
func TestMutants(t *testing.T) {
	want := os.Getenv("ZKCHAOS_MUTANTS")
	if want == "" || testing.Short() {
		t.Skip("set ZKCHAOS_MUTANTS=all (or mutant names) to run the mutants")
	}
	skipUnderRace(t)
	var cases []workloads.MutantCase
	for _, mc := range workloads.MutantCases() {
		if want == "all" || strings.Contains(","+want+",", ","+mc.Mutant.Name()+",") {
			cases = append(cases, mc)
		}
	}
	if len(cases) == 0 {
		t.Fatalf("no mutant named in %q", want)
	}
	seeds := os.Getenv("ZKCHAOS_MUTANT_SEEDS")
	if seeds == "" {
		seeds = "1"
	}
	e := testenv.New(t, testenv.Config{})
	// 15 minutes a seed: every mutant's scenarios take about 11 on one
	// (a flat 30 minutes cut the third of seeds 1,2,3 short)
	n := len(strings.Split(seeds, ","))
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(n)*15*time.Minute)
	defer cancel()
	var table []string
	for _, s := range strings.Split(seeds, ",") {
		var seed uint64
		if _, err := fmt.Sscan(s, &seed); err != nil || seed == 0 {
			t.Fatalf("seed %q", s)
		}
		r, err := NewRunner(e, mutantConfig(t, seed))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range mutantVerdicts(ctx, t, r, cases) {
			table = append(table, fmt.Sprintf("seed %d %s", seed, l))
		}
	}
	t.Logf("verdicts:\n%s", strings.Join(table, "\n"))
}

// TestMutantCases checks the registry: every mutant is a broken workload
// whose quick-tier scenarios are exactly its exposing faults, its twin has
// the same faults and checkers, and every fault and checker named exists.
func TestMutantCases(t *testing.T) {
	broken := map[string]bool{}
	for _, w := range workloads.Broken() {
		broken[w.Name()] = true
	}
	cfg, err := Config{}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	checkers := func(w workloads.Workload) []string {
		var out []string
		for _, c := range w.Checkers(cfg.checkConfig()) {
			out = append(out, c.Name)
		}
		return out
	}
	quick := map[string]bool{} // what zkchaos -broken runs
	for _, sc := range Matrix(faults.TierQuick, workloads.Broken()...) {
		quick[sc.Name] = true
	}
	for _, mc := range workloads.MutantCases() {
		m, tw := mc.Mutant.Name(), mc.Twin.Name()
		for _, f := range mc.Faults {
			if !quick[m+"/"+f] {
				t.Errorf("the quick tier of -broken lacks %s/%s", m, f)
			}
		}
		if m != tw+"-mutant" || !broken[m] || broken[tw] {
			t.Errorf("%s / %s: want a broken <twin>-mutant and a twin outside workloads.Broken", m, tw)
		}
		if len(mc.Faults) == 0 || len(mc.Catch) == 0 {
			t.Errorf("%s: no fault or no checker", m)
		}
		for _, f := range append(append([]string{}, mc.Faults...), mc.Mild...) {
			if _, err := faults.ByName(f); err != nil {
				t.Errorf("%s: %v", m, err)
			}
		}
		mcs, tcs := strings.Join(checkers(mc.Mutant), ","), strings.Join(checkers(mc.Twin), ",")
		if mcs != tcs {
			t.Errorf("%s checks %s, its twin %s", m, mcs, tcs)
		}
		for _, c := range mc.Catch {
			if !strings.Contains(","+mcs+",", ","+c+",") {
				t.Errorf("%s: checker %s is not among its checkers %s", m, c, mcs)
			}
		}
		wantM, wantT := mc.Scenarios()
		var gotM, gotT []string
		for _, sc := range Matrix(faults.TierQuick, mc.Mutant) {
			gotM = append(gotM, sc.Name)
		}
		for _, sc := range Matrix(faults.TierQuick, mc.Twin) {
			gotT = append(gotT, sc.Name)
		}
		if fmt.Sprint(gotM) != fmt.Sprint(wantM) || fmt.Sprint(gotT) != fmt.Sprint(wantT) {
			t.Errorf("%s: quick matrix %v and %v, want %v and %v", m, gotM, gotT, wantM, wantT)
		}
	}
}
