package main

import (
	"flag"
	"io"
	"strings"
	"testing"
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
