package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/report"
)

func TestReplayArgs(t *testing.T) {
	newFlags := func() *flag.FlagSet {
		fs := flag.NewFlagSet("zkchaos", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.String("tier", "quick", "")
		fs.String("scenarios", "", "")
		fs.Uint64("seed", 0, "")
		fs.String("out", "report", "")
		fs.Bool("v", false, "")
		fs.Bool("broken", false, "")
		fs.Bool("secure", false, "")
		fs.Int("mutant-seeds", 0, "")
		fs.Duration("duration", 0, "")
		fs.String("workloads", "", "")
		fs.String("digest", "", "")
		return fs
	}
	tests := []struct {
		name    string
		args    []string
		mutants bool
		want    string
	}{
		{"nothing set: the tier", nil, false, "zkchaos -tier quick"},
		{"drops seed, scenarios, out and -v; keeps the rest",
			[]string{"-tier", "full", "-seed", "5", "-scenarios", "lock/*", "-out", "/tmp/r", "-v", "-duration", "90s", "-workloads", "lock", "-secure"}, false,
			"zkchaos -tier full -duration 1m30s -secure -workloads lock"},
		{"a false boolean stays false", []string{"-secure=false"}, false, "zkchaos -tier quick -secure=false"},
		{"mutants: -broken instead of -mutant-seeds", []string{"-mutant-seeds", "5", "-broken"}, true, "zkchaos -tier quick -broken"},
		{"the digest as given (commandLine redacts it)", []string{"-digest", "app:pw"}, false, "zkchaos -tier quick -digest app:pw"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFlags()
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			tier := fs.Lookup("tier").Value.String()
			if got := strings.Join(replayArgs(fs, "zkchaos", tier, tt.mutants), " "); got != tt.want {
				t.Fatalf("%q, want %q", got, tt.want)
			}
		})
	}
}

// The exit status a CI reads: 0 only when every scenario passed.
func TestExitCode(t *testing.T) {
	pass := report.ScenarioResult{Scenario: "lock/kill-leader", Results: []checkers.Result{{Checker: "c", Checked: 1}}}
	fail := report.ScenarioResult{Scenario: "lock/cut-short", Results: []checkers.Result{{Checker: "c", Violations: []checkers.Violation{{Msg: "m"}}}}}
	unexercised := report.ScenarioResult{Scenario: "rwlock/latency-near", Results: []checkers.Result{{Checker: "c", Checked: 1},
		{Checker: "exercised", Checked: 1, Inconclusive: true, Note: "not exercised: latency-near left no traffic trace"}}}
	tests := []struct {
		name string
		err  error
		s    report.Summary
		want int
	}{
		{"all passed", nil, report.Summary{Planned: 1, Scenarios: []report.ScenarioResult{pass}}, 0},
		{"a violation", nil, report.Summary{Planned: 2, Scenarios: []report.ScenarioResult{pass, fail}}, 1},
		{"not exercised is no pass", nil, report.Summary{Planned: 2, Scenarios: []report.ScenarioResult{pass, unexercised}}, 3},
		{"a violation outranks it", nil, report.Summary{Planned: 2, Scenarios: []report.ScenarioResult{unexercised, fail}}, 1},
		{"interrupted", context.Canceled, report.Summary{Planned: 2, Scenarios: []report.ScenarioResult{pass}}, 130},
		{"could not go on", errors.New("ensemble lost"), report.Summary{Planned: 2, Scenarios: []report.ScenarioResult{pass}}, 2},
	}
	for _, tt := range tests {
		if got := exitCode(tt.err, tt.s); got != tt.want {
			t.Errorf("%s: exit %d, want %d", tt.name, got, tt.want)
		}
	}
}
