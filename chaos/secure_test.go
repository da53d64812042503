package chaos

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/faults"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/chaos/report"
	"github.com/zkrecipes/zkrecipes/chaos/workloads"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// checkRun fails t for every violation and error of sum, for every
// scenario that ran but was not exercised or injected no fault, and for
// nodes left under the run's root. It returns the scenarios that ran.
func checkRun(t testing.TB, sum report.Summary) []report.ScenarioResult {
	t.Helper()
	var table strings.Builder
	_ = sum.WriteTable(&table)
	t.Logf("\n%s", table.String())
	var ran []report.ScenarioResult
	for _, sc := range sum.Scenarios {
		if sc.NotApplicable != "" {
			continue
		}
		ran = append(ran, sc)
		for _, c := range sc.Results {
			for _, v := range c.Violations {
				t.Errorf("%s %s: %s %s", sc.Scenario, c.Checker, v.Client, v.Msg)
			}
			if (c.Checker == "exercised" || c.Checker == "throughput") && c.Inconclusive {
				t.Errorf("%s: not exercised (%s: %s); %s", sc.Scenario, c.Checker, c.Note, firstEvents(sc.History))
			}
		}
		if sc.Err != "" {
			t.Errorf("%s: %s", sc.Scenario, sc.Err)
		}
		if sc.Injected == 0 {
			t.Errorf("%s: no fault injected", sc.Scenario)
		}
	}
	if len(sum.RootLeft) > 0 || sum.RootErr != "" {
		t.Errorf("%s", sum.RootLine())
	}
	return ran
}

// firstEvents says when, after the history's start, the first progress
// event and the first fault came: what a throughput verdict rests on.
func firstEvents(h history.History) string {
	progress, fault := int64(-1), int64(-1)
	for _, e := range h.Events {
		if progress < 0 && e.Client != history.Nemesis && history.IsProgress(e) {
			progress = e.Time
		}
		if fault < 0 && e.Kind == history.KindFaultStart {
			fault = e.Time
		}
	}
	rel := func(t int64) string {
		if t < 0 {
			return "never"
		}
		return time.Duration(t - h.Start).Round(time.Millisecond).String()
	}
	return fmt.Sprintf("first progress at %s, first fault at %s", rel(progress), rel(fault))
}

// TestSecuredQuickTier runs the quick tier of lock and leader on an
// ensemble with a TLS-only client port and enforced digest
// authentication, every session over TLS and authenticated (issue 21):
// every scenario must run (cut-after-frame too: it cuts after the next
// TLS record), be exercised, pass, and read only nodes that carry the
// run's ACL. Then the lock-stepdown mutant (under partition-expire) and
// the fence mutant (clients in worker processes, under freeze-client) must
// still be caught on the same secured ensemble, and their twins pass; and a
// run that attaches to the same servers as external ones, with their CA
// file and digest credentials, must pass (externalSecured).
func TestSecuredQuickTier(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a ZooKeeper ensemble")
	}
	skipUnderRace(t)
	seed, _, err := testSeed(*seedFlag, os.Getenv(SeedEnv))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("chaos: TestSecuredQuickTier seed %d (replay with %s=%d)\n", seed, SeedEnv, seed)
	began := time.Now()
	e := testenv.New(t, testenv.Config{TLS: true, EnforceAuth: true})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	before, _ := ownGoroutines()
	defer func() {
		deadline := time.Now().Add(30 * time.Second)
		n, stacks := ownGoroutines()
		for n > before+5 && time.Now().Before(deadline) {
			<-time.After(100 * time.Millisecond)
			n, stacks = ownGoroutines()
		}
		if n > before+5 {
			t.Errorf("%d goroutines after the scenarios, %d before:\n%s", n, before, stacks)
		}
	}()

	t.Run("lock and leader pass", func(t *testing.T) {
		cfg := e2eConfig(t, seed)
		cfg.Secure = true
		ws, err := SelectWorkloads(workloads.All(), "lock,leader")
		if err != nil {
			t.Fatal(err)
		}
		scs := unplaced(Matrix(faults.TierQuick, ws...))
		r, err := NewRunner(e, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Secure() {
			t.Fatal("runner not secure on a TLS ensemble with -secure")
		}
		sum, err := r.Run(ctx, scs)
		if err != nil {
			t.Fatal(err)
		}
		if !sum.Secure {
			t.Error("summary not marked secure")
		}
		ran := checkRun(t, sum)
		for _, sc := range ran {
			c, ok := sc.Result(CheckerSecuredACL)
			if !ok || c.Checked == 0 {
				t.Errorf("%s: no node's ACL was checked (%v)", sc.Scenario, c)
			}
		}
		var na []string
		cut := false
		for _, sc := range sum.Scenarios {
			if sc.NotApplicable != "" {
				na = append(na, sc.Scenario+": "+sc.NotApplicable)
			}
			cut = cut || sc.Scenario == "lock/cut-after-frame"
		}
		if len(na) != 0 {
			t.Errorf("not applicable on a TLS ensemble: %v, want none", na)
		}
		if !cut {
			t.Error("lock/cut-after-frame is not in the secured quick tier")
		}
		if sum.Passed() != len(scs) || len(ran) != len(scs) {
			t.Errorf("%d passed, %d ran, of %d scenarios", sum.Passed(), len(ran), len(scs))
		}
		t.Logf("%d scenarios ran, in %v", len(ran), sum.Took)
	})

	t.Run("mutants are still caught", func(t *testing.T) {
		cfg := mutantConfig(t, seed)
		cfg.Secure = true
		r, err := NewRunner(e, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var cases []workloads.MutantCase
		for _, mc := range workloads.MutantCases() {
			// lock-stepdown in-process, fence in worker processes (which
			// get the CA's PEM and the credentials in their spec).
			if n := mc.Mutant.Name(); n == "lock-stepdown-mutant" || n == "fence-mutant" {
				mc.Mild = nil // the twin suffices here; TestEndToEnd runs the mild fault
				cases = append(cases, mc)
			}
		}
		if len(cases) != 2 {
			t.Fatalf("%d of the two mutants found", len(cases))
		}
		t.Logf("verdicts:\n%s", strings.Join(mutantVerdicts(ctx, t, r, cases), "\n"))
	})

	t.Run("as external servers", func(t *testing.T) {
		externalSecured(ctx, t, e, seed)
	})
	t.Logf("secured quick tier of lock and leader, the mutants and the external run took %v (ensemble start included)", time.Since(began).Round(time.Second))
}
