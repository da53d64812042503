package report

import (
	_ "embed"
	"html/template"
	"io"
	"strconv"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/chaos/history"
)

//go:embed report.html.tmpl
var reportTemplate string

var reportTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"cell":    func(r ScenarioResult, c string) string { return r.Cell(c) },
	"cellcls": cellClass,
	"hist":    HistoryFile,
	"round":   func(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) },
	"timeline": func(r ScenarioResult) Timeline {
		return NewTimeline(r.History, r.Results)
	},
	"rel": func(h history.History, t int64) string { return history.Rel(h, t) },
	"f":   func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
	"add": func(a, b int) int { return a + b },
}).Parse(reportTemplate))

// cellClass colours a summary cell.
func cellClass(r ScenarioResult, checker string) string {
	c, ok := r.Result(checker)
	switch {
	case !ok:
		return "na"
	case len(c.Violations) > 0:
		return "bad"
	case c.Voided:
		return "na"
	case c.Inconclusive:
		return "unknown"
	}
	return "good"
}

// WriteHTML renders the report page of s: totals, the summary table
// (scenario x invariant, with the items each checker examined or the
// violations it found), and per scenario its schedule, a timeline picture
// and its violations.
func WriteHTML(w io.Writer, s Summary) error {
	return reportTmpl.Execute(w, s)
}
