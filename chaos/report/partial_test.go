package report

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// readArtifacts parses summary.json (with float64 numbers) and junit.xml
// of dir, failing the test unless both are valid.
func readArtifacts(t *testing.T, dir string) (map[string]any, junitSuites) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, FileSummary))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	raw, err = os.ReadFile(filepath.Join(dir, FileJUnit))
	if err != nil {
		t.Fatal(err)
	}
	var ju junitSuites
	if err := xml.Unmarshal(raw, &ju); err != nil {
		t.Fatalf("junit.xml: %v", err)
	}
	return doc, ju
}

// The runner's order of writes (chaos.Runner.Run): after each scenario
// its files, then the index marked partial. A run killed after the first
// scenario leaves valid files that say "incomplete", not "pass".
func TestArtifactsAfterEveryScenario(t *testing.T) {
	dir := t.TempDir()
	all := sampleSummary().Scenarios
	all[1].Results = all[1].Results[:0] // both pass: a pass must not be claimed early
	all[1].Ops = 1
	s := sampleSummary()
	s.Scenarios, s.Planned = nil, len(all)
	for i, r := range all {
		s.Scenarios = append(s.Scenarios, r)
		snap := s
		snap.Partial = true
		if err := WriteScenarioFiles(dir, snap, r); err != nil {
			t.Fatal(err)
		}
		if err := WriteIndex(dir, snap); err != nil {
			t.Fatal(err)
		}
		// killed here
		doc, ju := readArtifacts(t, dir)
		if doc["verdict"] != VerdictIncomplete || doc["complete"] != false || len(doc["scenarios"].([]any)) != i+1 {
			t.Errorf("after scenario %d: verdict %v, complete %v, %d scenarios", i+1, doc["verdict"], doc["complete"], len(doc["scenarios"].([]any)))
		}
		run := ju.Suites[len(ju.Suites)-1]
		if run.Name != "zkchaos/run" || run.Errors != 1 || !strings.Contains(run.Cases[0].Error.Message, "run incomplete") {
			t.Errorf("after scenario %d: the run's suite does not say it is incomplete: %+v", i+1, run)
		}
		if len(ju.Suites) != i+2 {
			t.Errorf("after scenario %d: %d suites", i+1, len(ju.Suites))
		}
		html, _ := os.ReadFile(filepath.Join(dir, FileHTML))
		if !strings.Contains(string(html), "INCOMPLETE") {
			t.Errorf("after scenario %d: index.html does not say INCOMPLETE", i+1)
		}
		if h, err := history.Load(filepath.Join(dir, HistoryFile(r.Scenario))); err != nil || len(h.Events) != len(r.History.Events) {
			t.Errorf("history of %s: %d events, %v", r.Scenario, len(h.Events), err)
		}
	}
	if err := WriteIndex(dir, s); err != nil {
		t.Fatal(err)
	}
	doc, ju := readArtifacts(t, dir)
	if doc["verdict"] != VerdictPass || doc["complete"] != true || ju.Errors != 0 {
		t.Errorf("at the end: verdict %v, complete %v, junit errors %d", doc["verdict"], doc["complete"], ju.Errors)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".*"))
	more, _ := filepath.Glob(filepath.Join(dir, "*", ".*"))
	if len(leftovers)+len(more) > 0 {
		t.Errorf("temporary files left: %v %v", leftovers, more)
	}
}

// A write that fails leaves the previous file whole, and no temporary.
func TestWriteFileReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := writeFile(path, func(w io.Writer) error { _, err := io.WriteString(w, "old"); return err }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := writeFile(path, func(w io.Writer) error { io.WriteString(w, "ne"); return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want %v", err, boom)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("after a failed write: %q, want the old file", b)
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("%d files, want 1 (no temporary left)", len(es))
	}
}
