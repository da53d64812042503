package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zkrecipes/zkrecipes/lab/chaos/history"
)

// Report files written under the output directory.
const (
	FileHTML    = "index.html"
	FileJUnit   = "junit.xml"
	FileSummary = "summary.json"
	DirHistory  = "history" // one <scenario>.json per scenario
)

// HistoryFile names a scenario's history JSON, relative to the report.
func HistoryFile(scenario string) string {
	return DirHistory + "/" + strings.NewReplacer("/", "_", " ", "_").Replace(scenario) + ".json"
}

// Write writes the report of s into dir: index.html (summary table
// and a timeline per scenario), summary.json, junit.xml and every
// scenario's history as JSON under history/.
func Write(dir string, s Summary) error {
	if err := os.MkdirAll(filepath.Join(dir, DirHistory), 0o755); err != nil {
		return fmt.Errorf("chaos: report: %w", err)
	}
	for _, r := range s.Scenarios {
		if err := history.Save(filepath.Join(dir, HistoryFile(r.Scenario)), r.History); err != nil {
			return fmt.Errorf("chaos: report: %w", err)
		}
	}
	sum, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, FileSummary), sum, 0o644); err != nil {
		return fmt.Errorf("chaos: report: %w", err)
	}
	if err := writeFile(filepath.Join(dir, FileJUnit), func(f *os.File) error { return WriteJUnit(f, s) }); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, FileHTML), func(f *os.File) error { return WriteHTML(f, s) })
}

func writeFile(path string, fill func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("chaos: report: %w", err)
	}
	if err := fill(f); err != nil {
		f.Close()
		return fmt.Errorf("chaos: report %s: %w", filepath.Base(path), err)
	}
	return f.Close()
}
