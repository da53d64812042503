package report

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// Report files written under the output directory.
const (
	FileHTML     = "index.html"
	FileJUnit    = "junit.xml"
	FileSummary  = "summary.json"
	DirHistory   = "history"   // one <scenario>.json.gz per scenario
	DirScenarios = "scenarios" // one <scenario>.html per scenario
)

// fileName turns a scenario's name into a file name.
func fileName(scenario string) string {
	return strings.NewReplacer("/", "_", " ", "_").Replace(scenario)
}

// HistoryFile names a scenario's history, gzipped JSON (history.Load
// reads it), relative to the report.
func HistoryFile(scenario string) string {
	return DirHistory + "/" + fileName(scenario) + ".json.gz"
}

// DetailFile names a scenario's page (its schedule, fault windows,
// timeline and findings), relative to the report.
func DetailFile(scenario string) string {
	return DirScenarios + "/" + fileName(scenario) + ".html"
}

// VisualFile names porcupine's visualisation of a linearizability
// violation found by checker in scenario (checkers.Result.Visual),
// relative to the report.
func VisualFile(scenario, checker string) string {
	return DirScenarios + "/" + fileName(scenario) + "." + fileName(checker) + ".porcupine.html"
}

// Write writes the whole report of s into dir: every scenario's files
// (WriteScenarioFiles), then index.html, summary.json and junit.xml
// (WriteIndex).
func Write(dir string, s Summary) error {
	for _, r := range s.Scenarios {
		if err := WriteScenarioFiles(dir, s, r); err != nil {
			return err
		}
	}
	return WriteIndex(dir, s)
}

// WriteScenarioFiles writes what belongs to r, a scenario of s, into dir:
// its history (HistoryFile), porcupine's visualisation of each
// linearizability violation (VisualFile) and its page (DetailFile); nothing for a scenario that was
// not applicable. Each file is replaced whole (written aside, then
// renamed), so a run killed meanwhile leaves the previous file or the new
// one, never half of one.
func WriteScenarioFiles(dir string, s Summary, r ScenarioResult) error {
	if r.NotApplicable != "" {
		return nil
	}
	for _, sub := range []string{DirHistory, DirScenarios} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return fmt.Errorf("chaos: report: %w", err)
		}
	}
	if s.KeepsHistory(r) {
		if err := writeFile(filepath.Join(dir, HistoryFile(r.Scenario)), func(w io.Writer) error { return writeHistory(w, r.History) }); err != nil {
			return err
		}
	}
	for _, c := range r.Results {
		if len(c.Visual) == 0 {
			continue
		}
		if err := writeFile(filepath.Join(dir, VisualFile(r.Scenario, c.Checker)), func(w io.Writer) error { _, err := w.Write(c.Visual); return err }); err != nil {
			return err
		}
	}
	return writeFile(filepath.Join(dir, DetailFile(r.Scenario)), func(w io.Writer) error { return WriteDetail(w, s, r) })
}

// WriteIndex writes junit.xml, index.html and summary.json of s into dir,
// each replaced whole (as WriteScenarioFiles does), summary.json last. The
// runner calls it after every scenario with s.Partial set, so that a run
// killed by a CI timeout leaves valid files that say "incomplete": what
// summary.json lists, junit.xml and index.html list too (a kill between
// the writes leaves them one scenario ahead of it, never behind).
func WriteIndex(dir string, s Summary) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("chaos: report: %w", err)
	}
	if err := writeFile(filepath.Join(dir, FileJUnit), func(w io.Writer) error { return WriteJUnit(w, s) }); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, FileHTML), func(w io.Writer) error { return WriteHTML(w, s) }); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, FileSummary), func(w io.Writer) error { return WriteSummaryJSON(w, s) })
}

// KeepsHistory reports whether the report keeps r's history, r being a
// scenario of s: with AllHistories every one; otherwise a scenario that
// failed, or whose checks were not exercised or inconclusive, and the
// first scenario of each workload in s (a sample of a green run). The
// other histories of a green run are left out, which keeps a quick tier's
// report under 10 MB; -all-histories keeps them, and a replay of the
// scenario (summary.json's replay) records its history again.
func (s Summary) KeepsHistory(r ScenarioResult) bool {
	if s.AllHistories || r.Failed() {
		return true
	}
	for _, c := range r.Results {
		if st := StatusOf(c); st == StatusNotExercised || st == StatusInconclusive {
			return true
		}
	}
	for _, o := range s.Scenarios {
		if o.Workload == r.Workload && o.NotApplicable == "" {
			return o.Scenario == r.Scenario
		}
	}
	return true
}

// writeHistory writes h as gzipped JSON (about a fourteenth of its size).
func writeHistory(w io.Writer, h history.History) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	if err := json.NewEncoder(zw).Encode(h); err != nil {
		return err
	}
	return zw.Close()
}

// writeFile writes path through a temporary file in its directory,
// renamed over path once complete.
func writeFile(path string, fill func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("chaos: report: %w", err)
	}
	if err := fill(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("chaos: report %s: %w", filepath.Base(path), err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("chaos: report: %w", err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("chaos: report: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("chaos: report: %w", err)
	}
	return nil
}
