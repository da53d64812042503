package chaos

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/faults"
	"github.com/zkrecipes/zkrecipes/chaos/internal/browser"
	"github.com/zkrecipes/zkrecipes/chaos/report"
	"github.com/zkrecipes/zkrecipes/chaos/workloads"
	"github.com/zkrecipes/zkrecipes/testenv"
)

var seedFlag = flag.Uint64("zkchaos.seed", 0, "seed of TestEndToEnd's fault schedules (default: $"+SeedEnv+", else a new random seed each run)")

// SeedEnv names the environment variable that fixes the seed of the chaos
// tests (the -zkchaos.seed flag wins over it).
const SeedEnv = "ZKCHAOS_SEED"

// testSeed returns the seed asked for by flag or environment, or a new
// random one; fixed reports whether it was asked for.
func testSeed(flagSeed uint64, env string) (seed uint64, fixed bool, err error) {
	if flagSeed != 0 {
		return flagSeed, true, nil
	}
	if env = strings.TrimSpace(env); env != "" {
		seed, err := strconv.ParseUint(env, 10, 64)
		if err != nil || seed == 0 {
			return 0, false, fmt.Errorf("%w: %s=%q is not a seed (a positive integer)", ErrConfig, SeedEnv, env)
		}
		return seed, true, nil
	}
	for seed == 0 {
		seed = rand.Uint64()
	}
	return seed, false, nil
}

// e2eConfig is the quick tier shrunk for the test suite: a 2 s session
// timeout and no minimum duration, so a scenario ends as soon as the
// workload progressed after its fault healed.
func e2eConfig(t testing.TB, seed uint64) Config {
	return Config{
		Tier: faults.TierQuick, Seed: seed, SessionTimeout: 2 * time.Second, Clients: 3,
		Duration: time.Millisecond, Out: t.TempDir(), Progress: testWriter{t},
	}
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// quickScenarios is the quick tier as the test suite runs it, a cover
// of it: every workload and every quick fault at least once.
//   - Each QuickFaulter plays its representative fault only (zkchaos's
//     quick tier runs all its QuickFaults, the full tier every fault).
//   - The workloads that take every quick fault (lock, register,
//     lock-proc), the one that takes most faults first, each play the
//     faults that no workload before them played, and at least their
//     first: lock plays all of its faults (19), register only those lock
//     does not take (bandwidth, kill-all, partition-majority). zkchaos's
//     quick tier plays register under every quick fault.
//
// The placed faults (faults.Fault.Place) are left to zkchaos's quick
// tier: they take a quarter of a minute each, and TestPlacedIsolation
// (package faults) checks their placement and confirmation.
func quickScenarios() []Scenario {
	rep := map[string]bool{}
	for _, n := range workloads.Representative(workloads.All()...) {
		rep[n] = true
	}
	var out []Scenario
	byWorkload := map[string][]Scenario{}
	var order []string
	for _, sc := range unplaced(Matrix(faults.TierQuick, workloads.All()...)) {
		if _, sub := sc.Workload.(workloads.QuickFaulter); sub {
			if rep[sc.Name] {
				out = append(out, sc)
			}
			continue
		}
		n := sc.Workload.Name()
		if byWorkload[n] == nil {
			order = append(order, n)
		}
		byWorkload[n] = append(byWorkload[n], sc)
	}
	sort.SliceStable(order, func(i, j int) bool { return len(byWorkload[order[i]]) > len(byWorkload[order[j]]) })
	played := map[string]bool{}
	for _, n := range order {
		for i, sc := range byWorkload[n] {
			fresh := false
			for _, f := range sc.Faults {
				fresh = fresh || !played[f.Name]
			}
			if fresh || i == 0 {
				out = append(out, sc)
				for _, f := range sc.Faults {
					played[f.Name] = true
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// unplaced drops the scenarios of placed faults (faults.Fault.Place) from
// scs: the test suite leaves them to zkchaos's quick tier (see
// quickScenarios).
func unplaced(scs []Scenario) []Scenario {
	var out []Scenario
	for _, sc := range scs {
		placed := false
		for _, f := range sc.Faults {
			placed = placed || f.Place != ""
		}
		if !placed {
			out = append(out, sc)
		}
	}
	return out
}

// ShardEnv splits TestEndToEnd over test processes: "i/n" (1 <= i <= n)
// plays every n-th quick scenario from the i-th (see quickScenarios), and
// the broken workloads and the mutants only in shard n. scripts/test.sh
// runs 1/2 and 2/2 side by side. Unset: one process plays it all.
const ShardEnv = "ZKCHAOS_SHARD"

// shard parses ShardEnv's value: shard i of n, 1/1 when empty.
func shard(v string) (i, n int, err error) {
	if v == "" {
		return 1, 1, nil
	}
	a, b, ok := strings.Cut(v, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return 0, 0, fmt.Errorf("%s=%q: want i/n with 1 <= i <= n", ShardEnv, v)
	}
	return i, n, nil
}

// sharded is the i-th of n round-robin shares of scs.
func sharded(scs []Scenario, i, n int) []Scenario {
	var out []Scenario
	for k, sc := range scs {
		if k%n == i-1 {
			out = append(out, sc)
		}
	}
	return out
}

// TestEndToEnd runs the quick tier (see quickScenarios; ZKCHAOS_SCENARIOS
// selects from the whole quick matrix instead; ShardEnv a share of it) against a real 3-server ensemble and asserts no violation and a complete
// report; then it runs the deliberately broken workloads and asserts that
// the suite catches them, and two mutants (lock-stepdown under
// partition-expire, fence under freeze-client) with their twins and a mild
// fault, and asserts that the fault, not the workload alone, exposes each.
// Its report must keep within issue 34's size goals for the quick tier
// (checkSizes); with a headless browser installed (browser.Find), the
// passing report and the mutants' failing one are loaded in it
// (browsePassing, browseFailing).
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a ZooKeeper ensemble")
	}
	skipUnderRace(t)
	reachedEnd := false
	seed, fixed, err := testSeed(*seedFlag, os.Getenv(SeedEnv))
	if err != nil {
		t.Fatal(err)
	}
	shardI, shardN, err := shard(os.Getenv(ShardEnv))
	if err != nil {
		t.Fatal(err)
	}
	last := shardI == shardN // the broken workloads and mutants run here
	how := "new random seed"
	if fixed {
		how = "fixed seed"
	}
	inShard := ""
	if shardN > 1 {
		inShard = fmt.Sprintf(" %s=%d/%d", ShardEnv, shardI, shardN)
	}
	fmt.Printf("chaos: TestEndToEnd seed %d (%s; replay with %s=%d%s or -zkchaos.seed %d)\n", seed, how, SeedEnv, seed, inShard, seed)
	t.Logf("seed %d (%s)", seed, how)
	defer func() {
		if !reachedEnd || t.Failed() {
			t.Logf("failed with seed %d: replay with %s=%d", seed, SeedEnv, seed)
		}
	}()
	e := testenv.New(t, testenv.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	before, _ := ownGoroutines()
	defer func() { // every session, worker reader and link of the scenarios is gone
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

	t.Run("quick tier passes", func(t *testing.T) {
		cfg := e2eConfig(t, seed)
		scs := sharded(quickScenarios(), shardI, shardN)
		if filter := os.Getenv("ZKCHAOS_SCENARIOS"); filter != "" {
			var err error
			if scs, err = Select(Matrix(faults.TierQuick, workloads.All()...), filter); err != nil {
				t.Fatal(err)
			}
		}
		r, err := NewRunner(e, cfg)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := r.Run(ctx, scs)
		if err != nil {
			t.Fatal(err)
		}
		var table strings.Builder
		_ = sum.WriteTable(&table)
		t.Logf("\n%s", table.String())
		if sum.Failed() {
			for _, sc := range sum.Scenarios {
				for _, c := range sc.Results {
					for _, v := range c.Violations {
						t.Errorf("FAIL %s %s: %s %s", sc.Scenario, c.Checker, v.Client, v.Msg)
					}
				}
				if sc.Err != "" {
					t.Errorf("FAIL %s: %s", sc.Scenario, sc.Err)
				}
			}
		}
		// a scenario that tested nothing is no pass (report.VerdictNotExercised)
		for _, sc := range sum.Scenarios {
			if sc.Verdict() == report.VerdictNotExercised {
				for _, c := range sc.Results {
					if report.StatusOf(c) == report.StatusNotExercised {
						t.Errorf("NOT EXERCISED %s: %s", sc.Scenario, report.Reason(c))
					}
				}
			}
		}
		if got := sum.Injected(); got != len(scs) {
			t.Errorf("FAIL %d faults injected, want %d", got, len(scs))
		}
		for _, f := range []string{report.FileHTML, report.FileJUnit, report.FileSummary, report.HistoryFile(scs[0].Name)} {
			if st, err := os.Stat(filepath.Join(cfg.Out, f)); err != nil || st.Size() == 0 {
				t.Errorf("report file %s: %v", f, err)
			}
		}
		checkSizes(t, cfg.Out, len(scs))
		if bin := browser.Find(); bin == "" {
			t.Logf("no headless browser (%s): the report was not loaded in one", browser.Env)
		} else if sum.Verdict() == report.VerdictPass {
			browsePassing(ctx, t, bin, cfg.Out, scs, 3)
		}
	})

	t.Run("a slow start is struck once it runs", func(t *testing.T) {
		// The first fault of a workloads.SlowStarter waits for its rate
		// (Runner.warmUp): a register workload that starts a whole session
		// timeout late, at or after the latest time a quick schedule draws
		// its first fault, is struck once it runs, and is exercised. Before
		// the runner waited, this scenario was not exercised on every seed.
		if last && shardN > 1 {
			t.Skipf("shard %d/%d: runs in shard 1", shardI, shardN)
		}
		cfg := e2eConfig(t, seed)
		r, err := NewRunner(e, cfg)
		if err != nil {
			t.Fatal(err)
		}
		cut, err := faults.ByName("cut-short")
		if err != nil {
			t.Fatal(err)
		}
		w := &slowStart{Workload: &workloads.Register{}, delay: cfg.SessionTimeout}
		sum, err := r.Run(ctx, []Scenario{{Name: w.Name() + "/cut-short", Workload: w, Faults: []faults.Fault{cut}}})
		if err != nil {
			t.Fatal(err)
		}
		sc := sum.Scenarios[0]
		t.Logf("%s", sc.Line())
		if v := sc.Verdict(); v != report.VerdictPass {
			for _, c := range sc.Results {
				if why := report.Reason(c); why != "" || len(c.Violations) > 0 {
					t.Logf("  %s: %s %v", c.Checker, why, c.Violations)
				}
			}
			t.Fatalf("%s: verdict %s, want %s", sc.Scenario, v, report.VerdictPass)
		}
		if tp, ok := sc.Result("throughput"); !ok || tp.Checked == 0 {
			t.Fatalf("throughput counted no operation before the fault: %+v", tp)
		}
	})

	t.Run("broken workloads are caught", func(t *testing.T) {
		if !last {
			t.Skipf("shard %d/%d: the broken workloads run in shard %d", shardI, shardN, shardN)
		}
		cfg := e2eConfig(t, seed)
		r, err := NewRunner(e, cfg)
		if err != nil {
			t.Fatal(err)
		}
		// These two fail with or without a fault.
		want := map[string]string{"register-broken/cut-short": "linearizable", "lock-broken/kill-follower": "mutual-exclusion"}
		scs, err := Select(Matrix(faults.TierQuick, workloads.Broken()...), "register-broken/cut-short,lock-broken/kill-follower")
		if err != nil {
			t.Fatal(err)
		}
		sum, err := r.Run(ctx, scs)
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range sum.Scenarios {
			c, ok := sc.Result(want[sc.Scenario])
			if !ok || len(c.Violations) == 0 {
				t.Errorf("FAIL %s: %s found no violation: %s", sc.Scenario, want[sc.Scenario], sc.Line())
				continue
			}
			t.Logf("%s caught by %s: %s", sc.Scenario, c.Checker, c.Violations[0].Msg)
		}
		if !sum.Failed() {
			t.Error("a run of broken workloads passed")
		}
	})

	t.Run("mutants are caught only under their faults", func(t *testing.T) {
		// Two mutants that only a fault exposes (TestMutants runs them
		// all): each must be caught under its fault by its checker, pass
		// under a mild fault, and its twin must pass under the same fault
		// and seed.
		if !last {
			t.Skipf("shard %d/%d: the mutants run in shard %d", shardI, shardN, shardN)
		}
		cfg := mutantConfig(t, seed)
		r, err := NewRunner(e, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var cases []workloads.MutantCase
		for _, mc := range workloads.MutantCases() {
			if n := mc.Mutant.Name(); n == "lock-stepdown-mutant" || n == "fence-mutant" {
				cases = append(cases, mc)
			}
		}
		if len(cases) != 2 {
			t.Fatalf("%d of the two mutants found", len(cases))
		}
		t.Logf("verdicts:\n%s", strings.Join(mutantVerdicts(ctx, t, r, cases), "\n"))
		// the report of a run with failing mutants, in a browser
		if bin := browser.Find(); bin == "" {
			t.Logf("no headless browser (%s): the report was not loaded in one", browser.Env)
		} else if !t.Failed() {
			browseFailing(ctx, t, bin, cfg.Out)
		}
	})
	reachedEnd = true
}

// slowStart is a workload that starts delay late: its set-up takes longer
// than the time before the first fault.
type slowStart struct {
	workloads.Workload
	delay time.Duration
}

func (w *slowStart) Name() string { return w.Workload.Name() + "-slow" }

func (w *slowStart) SlowStart() bool { return true }

func (w *slowStart) Run(ctx context.Context, env *cluster.Env) error {
	select {
	case <-ctx.Done():
		return nil
	case <-time.After(w.delay):
	}
	return w.Workload.Run(ctx, env)
}

// ownGoroutines counts the goroutines outside Toxiproxy, with their stacks.
// Toxiproxy's own are left out: its bandwidth toxic sends to the next stage
// without watching for interruption, so when a client closes its connection
// mid-transfer (as faults make them do) that goroutine, and the stages
// feeding it, block for the life of the process. It is an upstream bug in
// the test proxy, not a leak of a session, workload or recipe.
func ownGoroutines() (int, string) {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var own []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, "github.com/Shopify/toxiproxy/") {
			own = append(own, g)
		}
	}
	return len(own), strings.Join(own, "\n\n")
}
