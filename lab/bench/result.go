package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Floor is the least a workload's operation can cost on the wire. A
// negative field means there is no floor to compare with.
type Floor struct {
	Requests      float64 `json:"requests"`      // requests per operation, pings excluded
	Lists         float64 `json:"lists"`         // getChildren per operation
	Notifications float64 `json:"notifications"` // watch notifications per release (to waiters)
}

// floorSlack is how far above a floor a figure may be and still count as at
// the floor (rounding, and the rare waiter whose predecessor left before
// its watch was set).
const floorSlack = 0.05

// Cost is what an operation cost on the wire, on average. Bytes count
// whole frames (length prefix included): BytesOut the requests, BytesIn
// their replies and the watch notifications; pings and connects are left
// out of every figure.
type Cost struct {
	Requests      float64            `json:"requests"`
	Lists         float64            `json:"lists"`
	Notifications float64            `json:"notifications"`
	BytesOut      float64            `json:"bytes_out"`
	BytesIn       float64            `json:"bytes_in"`
	ByOp          map[string]float64 `json:"by_op,omitempty"`
}

// Result is one implementation's figure on one workload.
type Result struct {
	Workload string `json:"workload"`
	Impl     string `json:"impl"`
	// Unit of Value ("ms", "handoffs/s", "items/s", "ops/s", "incr/s",
	// "cycles/s", "changes/s", "events/s"); Lower tells whether smaller is
	// better.
	Unit  string  `json:"unit"`
	Lower bool    `json:"lower_is_better"`
	Value float64 `json:"value"`
	// P99 is the 99th percentile, for latency workloads.
	P99 float64 `json:"p99,omitempty"`
	// Ops is how many operations the figure is over, and Cost's divisor
	// (a tree cache's changes written, or its update events delivered).
	Ops   int   `json:"ops"`
	Cost  Cost  `json:"cost"`
	Floor Floor `json:"floor"`
	// Speed is how fast this implementation is relative to zkrecipes on
	// the same workload (>1: faster, <1: slower); 0 when unknown.
	Speed float64 `json:"speed_vs_zkrecipes"`
	// RoundTrips is a latency figure in round trips: Value over the
	// run's round-trip row (zkrecipes', else go-zookeeper's); 0 when
	// there is none or the figure is not a latency.
	RoundTrips float64 `json:"round_trips,omitempty"`
	// Err is set when the workload failed or could not run (Value is then 0).
	Err string `json:"error,omitempty"`
}

// AtFloor reports whether every cost is within the floor (plus slack).
func (r Result) AtFloor() bool {
	ok := func(got, floor float64) bool { return floor < 0 || got <= floor+floorSlack }
	return ok(r.Cost.Requests, r.Floor.Requests) && ok(r.Cost.Lists, r.Floor.Lists) &&
		ok(r.Cost.Notifications, r.Floor.Notifications)
}

// Report is a whole run.
type Report struct {
	Command  string        `json:"command"`
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration_ns"`
	Backend  string        `json:"backend"`
	Servers  int           `json:"servers"`
	CPUs     int           `json:"cpus"`
	Results  []Result      `json:"results"`
	Notes    []string      `json:"notes,omitempty"`
}

// ComputeSpeeds fills every result's Speed from the zkrecipes result of the
// same workload, and every latency's RoundTrips from the run's round-trip
// row.
func (rep *Report) ComputeSpeeds() {
	ref := map[string]float64{}
	var rt, rtGoZK float64
	for _, r := range rep.Results {
		if r.Err != "" || r.Value <= 0 {
			continue
		}
		if r.Impl == ImplZkrecipes {
			ref[r.Workload] = r.Value
		}
		if r.Workload == WRoundTrip && r.Impl == ImplZkrecipes {
			rt = r.Value
		}
		if r.Workload == WRoundTrip && r.Impl == ImplGoZK {
			rtGoZK = r.Value
		}
	}
	if rt == 0 {
		rt = rtGoZK
	}
	for i := range rep.Results {
		r := &rep.Results[i]
		r.RoundTrips = 0
		if r.Err == "" && r.Unit == "ms" && r.Value > 0 && rt > 0 {
			r.RoundTrips = r.Value / rt
		}
		z, ok := ref[r.Workload]
		r.Speed = 0
		if !ok || r.Err != "" || r.Value <= 0 {
			continue
		}
		if r.Lower {
			r.Speed = z / r.Value
		} else {
			r.Speed = r.Value / z
		}
	}
}

func fmtNum(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// figure formats a result's value with its unit.
func (r Result) figure() string {
	if r.Err != "" {
		return "—"
	}
	if r.P99 > 0 {
		return fmt.Sprintf("%s %s (p99 %s)", fmtNum(r.Value), r.Unit, fmtNum(r.P99))
	}
	return fmt.Sprintf("%s %s", fmtNum(r.Value), r.Unit)
}

// roundTrips formats a latency in round trips ("—" when not one).
func (r Result) roundTrips() string {
	if r.RoundTrips == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", r.RoundTrips)
}

func (r Result) speed() string {
	switch {
	case r.Err != "":
		return "—"
	case r.Impl == ImplZkrecipes:
		return "1.00"
	case r.Speed == 0:
		return "?"
	}
	return fmt.Sprintf("%.2f", r.Speed)
}

// costCell formats got against floor; "!" marks a figure above its floor.
func costCell(r Result, got, floor float64) string {
	if r.Err != "" {
		return "—"
	}
	s := fmtNum(got)
	if floor < 0 {
		return s
	}
	mark := ""
	if got > floor+floorSlack {
		mark = " !"
	}
	return fmt.Sprintf("%s (%s)%s", s, fmtNum(floor), mark)
}

// Header is the table's column titles.
var Header = []string{"workload", "implementation", "figure", "round trips", "speed vs zkrecipes", "requests/op (floor)", "lists/op (floor)", "notifications/release (floor)"}

// Rows returns the table's cells, one row per result.
func (rep *Report) Rows() [][]string {
	var rows [][]string
	for _, r := range rep.Results {
		figure := r.figure()
		if r.Err != "" {
			figure = "n/a: " + r.Err
		}
		rows = append(rows, []string{r.Workload, r.Impl, figure, r.roundTrips(), r.speed(),
			costCell(r, r.Cost.Requests, r.Floor.Requests), costCell(r, r.Cost.Lists, r.Floor.Lists),
			costCell(r, r.Cost.Notifications, r.Floor.Notifications)})
	}
	return rows
}

// WriteMarkdown writes the table as GitHub Markdown.
func (rep *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("| " + strings.Join(Header, " | ") + " |\n|")
	for range Header {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, row := range rep.Rows() {
		for i := range row {
			row[i] = strings.ReplaceAll(row[i], "|", `\|`)
		}
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteText writes the table with aligned columns for a terminal.
func (rep *Report) WriteText(w io.Writer) error {
	rows := append([][]string{Header}, rep.Rows()...)
	width := make([]int, len(Header))
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	var b strings.Builder
	for n, row := range rows {
		for i, c := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(c)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", width[i]-len([]rune(c))))
			}
		}
		b.WriteString("\n")
		if n == 0 {
			for i := range width {
				if i > 0 {
					b.WriteString("  ")
				}
				b.WriteString(strings.Repeat("-", width[i]))
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteFiles writes results.json, results.md and results.svg into dir.
func (rep *Report) WriteFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	var md strings.Builder
	if err := rep.WriteMarkdown(&md); err != nil {
		return err
	}
	fmt.Fprintf(&md, "\n%s\n", rep.Caption())
	if behind := rep.Behind(); len(behind) > 0 {
		md.WriteString("\nWhere a peer was faster in this run, and what zkrecipes pays there:\n")
		for _, l := range behind {
			fmt.Fprintf(&md, "\n- %s", l)
		}
		md.WriteString("\n")
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(&md, "\n- %s", n)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.md"), []byte(md.String()+"\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "results.svg"), []byte(rep.SVG()), 0o644)
}

// Caption says where and how the figures were taken.
func (rep *Report) Caption() string {
	return fmt.Sprintf("`%s` — %d-server ensemble (%s backend), %d CPUs, %s, took %s. "+
		"Speed: >1 is faster than zkrecipes. Costs are per operation, counted on the wire by the same proxy for every "+
		"implementation; \"!\" marks a cost above its floor.",
		rep.Command, rep.Servers, rep.Backend, rep.CPUs, rep.Started.UTC().Format("2006-01-02 15:04 MST"),
		rep.Duration.Round(time.Second))
}
