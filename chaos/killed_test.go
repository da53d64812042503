package chaos

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/faults"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/chaos/report"
	"github.com/zkrecipes/zkrecipes/chaos/workloads"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// killedChildEnv carries, to the child of TestKilledRunLeavesArtifacts,
// the servers, root, report directory and seed of its run.
const killedChildEnv = "ZKCHAOS_KILLED_CHILD"

// killedScenarios are the child's scenarios: client faults only (it runs
// against servers it did not start), more than it can finish before the
// parent kills it.
const killedScenarios = "register/cut-short,register/half-open,register/latency-near,register/limit-data,register/bandwidth,register/partition-expire"

// TestKilledRunChild is the run TestKilledRunLeavesArtifacts kills; it
// skips itself unless started by it.
func TestKilledRunChild(t *testing.T) {
	arg := os.Getenv(killedChildEnv)
	if arg == "" {
		t.Skip("run by TestKilledRunLeavesArtifacts")
	}
	parts := strings.Split(arg, ";")
	if len(parts) != 4 {
		t.Fatalf("%s=%q", killedChildEnv, arg)
	}
	seed, err := strconv.ParseUint(parts[3], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cfg := e2eConfig(t, seed)
	cfg.Servers, cfg.Root, cfg.Out = strings.Split(parts[0], ","), parts[1], parts[2]
	cfg.Logger = nil
	ext, err := AttachServers(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	scs, err := Select(Matrix(faults.TierQuick, workloads.All()...), killedScenarios)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner(ext, cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Run(ctx, scs)
	t.Fatalf("the run ended (%v): it should have been killed", err)
}

// TestKilledRunLeavesArtifacts (issue 34: artifacts written after every
// scenario, so that a run killed by a CI timeout leaves valid artifacts)
// starts a chaos run in a child process against an ensemble of its own,
// waits until the report lists the first scenario, kills the child with
// SIGKILL (as a CI timeout may) and reads what it left: summary.json
// parsed with float64 numbers says "incomplete" (or "fail" if a
// scenario failed), not complete, with the seed as a string and fewer
// scenarios than planned; junit.xml parses and its run suite errs with
// "run incomplete"; index.html says INCOMPLETE; every scenario listed has
// its page, and its history (when kept) loads.
func TestKilledRunLeavesArtifacts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a ZooKeeper ensemble")
	}
	skipUnderRace(t)
	seed, _, err := testSeed(*seedFlag, os.Getenv(SeedEnv))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("seed %d (replay with %s=%d)", seed, SeedEnv, seed)
	e := testenv.New(t, testenv.Config{})
	out := t.TempDir()
	root := fmt.Sprintf("/zkchaos-killed-%x", seed&0xffffff)
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledRunChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s;%s;%s;%d", killedChildEnv, strings.Join(e.DirectAddrs(), ","), root, out, seed))
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if t.Failed() {
			t.Logf("child's output:\n%s", log.String())
		}
	}()

	// Wait until summary.json lists a scenario, then kill.
	summary := filepath.Join(out, report.FileSummary)
	deadline := time.After(5 * time.Minute)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	listed := func() int {
		raw, err := os.ReadFile(summary)
		if err != nil {
			return 0
		}
		var doc struct{ Scenarios []json.RawMessage }
		if json.Unmarshal(raw, &doc) != nil {
			return 0
		}
		return len(doc.Scenarios)
	}
wait:
	for {
		select {
		case err := <-exited:
			t.Fatalf("the child ended before a scenario was written: %v", err)
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatal("no scenario in summary.json after 5 minutes")
		case <-tick.C:
			if listed() > 0 {
				break wait
			}
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("child: %v, want killed", err)
	}

	// summary.json, read as jq 1.6 or JavaScript would.
	raw, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("summary.json after the kill: %v", err)
	}
	scs, _ := doc["scenarios"].([]any)
	planned := len(strings.Split(killedScenarios, ","))
	verdict := doc["verdict"]
	failing, _ := doc["failing"].([]any)
	if verdict != report.VerdictIncomplete && (verdict != report.VerdictFail || len(failing) == 0) {
		t.Errorf("verdict %v (failing %v), want %s", verdict, failing, report.VerdictIncomplete)
	}
	if doc["complete"] != false || doc["schema_version"] != float64(report.SchemaVersion) || doc["seed"] != strconv.FormatUint(seed, 10) {
		t.Errorf("complete %v, schema_version %v, seed %v (%T)", doc["complete"], doc["schema_version"], doc["seed"], doc["seed"])
	}
	if len(scs) == 0 || len(scs) >= planned {
		t.Errorf("%d scenarios in summary.json, want 1 to %d", len(scs), planned-1)
	}

	// junit.xml
	raw, err = os.ReadFile(filepath.Join(out, report.FileJUnit))
	if err != nil {
		t.Fatal(err)
	}
	var ju struct {
		Suites []struct {
			Name   string `xml:"name,attr"`
			Errors int    `xml:"errors,attr"`
			Cases  []struct {
				Name  string `xml:"name,attr"`
				Error *struct {
					Message string `xml:"message,attr"`
				} `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(raw, &ju); err != nil {
		t.Fatalf("junit.xml after the kill: %v", err)
	}
	// junit.xml is written before summary.json (report.WriteIndex): it
	// lists the scenarios summary.json lists, or one more when the kill
	// fell between the two writes; plus its run suite
	if n := len(ju.Suites); n != len(scs)+1 && n != len(scs)+2 {
		t.Errorf("junit.xml: %d suites for %d scenarios", n, len(scs))
	} else if run := ju.Suites[n-1]; run.Name != "zkchaos/run" || run.Errors == 0 ||
		len(run.Cases) == 0 || run.Cases[0].Error == nil || !strings.Contains(run.Cases[0].Error.Message, "run incomplete") {
		t.Errorf("junit.xml's run suite does not say the run is incomplete: %+v", run)
	}

	// index.html, the scenarios' pages and histories
	idx, err := os.ReadFile(filepath.Join(out, report.FileHTML))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(idx), "INCOMPLETE") && verdict == report.VerdictIncomplete {
		t.Error("index.html does not say INCOMPLETE")
	}
	if !strings.HasSuffix(strings.TrimSpace(string(idx)), "</html>") {
		t.Error("index.html is cut short")
	}
	for _, sc := range scs {
		m := sc.(map[string]any)
		name, _ := m["scenario"].(string)
		page, err := os.ReadFile(filepath.Join(out, report.DetailFile(name)))
		if err != nil || !strings.HasSuffix(strings.TrimSpace(string(page)), "</html>") {
			t.Errorf("%s's page: %v, %d bytes", name, err, len(page))
		}
		hf := filepath.Join(out, report.HistoryFile(name))
		if _, err := os.Stat(hf); err == nil {
			if h, err := history.Load(hf); err != nil || len(h.Events) == 0 {
				t.Errorf("%s's history: %d events, %v", name, len(h.Events), err)
			}
		}
	}
	t.Logf("killed after %d of %d scenarios: verdict %v; summary.json %d bytes, junit.xml %d suites", len(scs), planned, verdict, len(raw), len(ju.Suites))
}
