package report

import (
	_ "embed"
	"html/template"
	"io"
	"strconv"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/history"
)

//go:embed report.html.tmpl
var reportTemplate string

var reportTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"hist":    HistoryFile,
	"detail":  DetailFile,
	"visual":  VisualFile,
	"round":   func(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) },
	"roundms": func(d time.Duration) time.Duration { return d.Round(time.Millisecond) },
	"timeline": func(r ScenarioResult) Timeline {
		return NewTimeline(r.History, r.Results)
	},
	"windows": Windows,
	"rate": func(r ScenarioResult) *RateChart {
		if c, ok := NewRateChart(r.History); ok {
			return &c
		}
		return nil
	},
	"addf":        func(a, b float64) float64 { return a + b },
	"f2":          func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) },
	"rel":         func(h history.History, t int64) string { return history.Rel(h, t) },
	"f":           func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
	"sec":         func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) + " s" },
	"secp":        func(v *float64) string { return strconv.FormatFloat(*v, 'f', 3, 64) + " s" },
	"add":         func(a, b int) int { return a + b },
	"index_file":  func() string { return FileHTML },
	"verdictWord": verdictWord,
	"severe":      severe,
	// longer: the fault held more than a second past its schedule
	"longer": func(w Window) bool { return w.HeldFor != nil && *w.HeldFor > w.ScheduledFor+1 },
}).Parse(reportTemplate))

// verdictWord is the run's verdict as the page heads it.
func verdictWord(s Summary) string {
	switch s.Verdict() {
	case VerdictFail:
		return "FAIL"
	case VerdictIncomplete:
		return "INCOMPLETE"
	case VerdictNotExercised:
		return "NOT EXERCISED"
	}
	return "PASS"
}

// severe reports whether an attention list holds a failure.
func severe(as []Attention) bool {
	for _, a := range as {
		if a.Kind == AttnViolation || a.Kind == AttnError || a.Kind == AttnRoot {
			return true
		}
	}
	return false
}

// WriteHTML renders index.html of s: the verdict with the failing
// scenarios named, the run's replay command, "needs attention" (see
// Summary.Attention) and a summary table per workload (scenario x
// invariant; see ScenarioResult.Cell), each scenario linked to its page
// (WriteDetail). It draws no timeline: those are on the scenarios' pages,
// so the index stays small.
func WriteHTML(w io.Writer, s Summary) error {
	return reportTmpl.ExecuteTemplate(w, "index", s)
}

// WriteDetail renders the page of r, a scenario of s: its replay command,
// its fault windows as scheduled and as injected, with their targets, its
// checks with their notes, its violations, its rate and latency picture
// (RateChart) and its timeline picture (Timeline).
func WriteDetail(w io.Writer, s Summary, r ScenarioResult) error {
	return reportTmpl.ExecuteTemplate(w, "detail", struct {
		S Summary
		R ScenarioResult
	}{s, r})
}
