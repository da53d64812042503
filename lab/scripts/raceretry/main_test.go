package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAnalyze(t *testing.T) {
	type verdict struct {
		pkg    string
		retry  bool
		reason string // substring
	}
	const mod = "github.com/zkrecipes/zkrecipes/"
	tests := []struct {
		log  string
		want []verdict
	}{
		{"pure_race.log", []verdict{{mod + "lock", true, "TestReconnectKeepsWatch, TestContention/four_clients failed only with go-zookeeper's lastZxid race"}}},
		{"mixed.log", []verdict{
			{mod + "chaos", false, `TestEndToEnd/quick_tier_passes failed with something else than a race: "e2e_test.go:131: queue/half-open queue-delivery: c3 two live claims`},
			{mod + "leader", true, "TestLeaderFailover failed only"},
		}},
		{"race_and_panic.log", []verdict{{mod + "queue", false, `output outside any failing test: "panic: runtime error`}}},
		{"other_race.log", []verdict{{mod + "lock", false, "a data race that is not go-zookeeper's lastZxid race"}}},
		{"error_and_race.log", []verdict{{mod + "lock", false, `something else than a race: "lock_test.go:88: two holders`}}},
		{"build_failed.log", []verdict{{mod + "lock", false, "[build failed]"}}},
		{"timeout.log", []verdict{{mod + "chaos", false, `output outside any failing test: "panic: test timed out`}}},
		// A real chaos run's output (a race planted in the quick tier,
		// its report then swapped for a lastZxid one): the seed line
		// outside the tests, verdicts logged, each test's attestation,
		// the parent's after the ensemble's close.
		{"attested_race.log", []verdict{{mod + "lab/chaos", true, "TestEndToEnd/quick_tier_passes failed only"}}},
		// The same with the seed lines of lab/chaos's other tests
		// (TestExternalServers, TestSecuredQuickTier), which passed:
		// refused as "output outside any failing test" before.
		{"attested_race_seeds.log", []verdict{{mod + "lab/chaos", true, "TestEndToEnd/quick_tier_passes failed only"}}},
		{"attested_then_error.log", []verdict{{mod + "lab/chaos", false, `TestEndToEnd failed with more than its subtests: "testenv.go:40: close ensemble`}}},
		{"log_without_attestation.log", []verdict{{mod + "lab/chaos", false, `something else than a race: "e2e_test.go:57: [1/39] PASS`}}},
	}
	for _, tt := range tests {
		t.Run(tt.log, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", tt.log))
			if err != nil {
				t.Fatal(err)
			}
			got := Analyze(string(raw))
			if len(got) != len(tt.want) {
				t.Fatalf("%d failed packages, want %d: %+v", len(got), len(tt.want), got)
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Name != w.pkg || g.Retry != w.retry || !strings.Contains(g.Reason, w.reason) {
					t.Errorf("package %d: %s retry=%v %q; want %s retry=%v, reason containing %q", i, g.Name, g.Retry, g.Reason, w.pkg, w.retry, w.reason)
				}
			}
		})
	}
}

// TestAnalyzeNothingFailed: a log without a failed package retries nothing.
func TestAnalyzeNothingFailed(t *testing.T) {
	if got := Analyze("ok  \tgithub.com/zkrecipes/zkrecipes/lock\t3.1s\n"); len(got) != 0 {
		t.Fatalf("verdicts on a passing run: %+v", got)
	}
}
