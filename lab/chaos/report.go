package chaos

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Report files written under the output directory.
const (
	ReportHTML    = "index.html"
	ReportJUnit   = "junit.xml"
	ReportSummary = "summary.json"
	ReportHistory = "history" // one <scenario>.json per scenario
)

// historyFile names a scenario's history JSON, relative to the report.
func historyFile(scenario string) string {
	return ReportHistory + "/" + strings.NewReplacer("/", "_", " ", "_").Replace(scenario) + ".json"
}

// WriteReport writes the report of s into dir: index.html (summary table
// and a timeline per scenario), summary.json, junit.xml and every
// scenario's history as JSON under history/.
func WriteReport(dir string, s Summary) error {
	if err := os.MkdirAll(filepath.Join(dir, ReportHistory), 0o755); err != nil {
		return fmt.Errorf("chaos: report: %w", err)
	}
	for _, r := range s.Scenarios {
		if err := SaveHistory(filepath.Join(dir, historyFile(r.Scenario)), r.History); err != nil {
			return fmt.Errorf("chaos: report: %w", err)
		}
	}
	sum, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ReportSummary), sum, 0o644); err != nil {
		return fmt.Errorf("chaos: report: %w", err)
	}
	if err := writeFile(filepath.Join(dir, ReportJUnit), func(f *os.File) error { return WriteJUnit(f, s) }); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, ReportHTML), func(f *os.File) error { return WriteHTML(f, s) })
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
