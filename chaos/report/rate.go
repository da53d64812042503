package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// RateChart is the geometry of a scenario's rate and latency picture, as
// Jepsen's reports draw them: over the scenario's time, the operations
// completed per second (ok and failed) in one panel, and the median and
// the largest latency of the operations that completed in each slice of
// time in another (log scale), fault windows shaded across both. Each
// series is one polyline, whatever the number of operations.
type RateChart struct {
	Width, Height int
	Panels        []ratePanel
	Faults        []tlRect
	Ticks         []tlTick
	Bottom        int
}

type ratePanel struct {
	Title  string
	Top    float64 // y of the panel's top
	Height float64
	Series []rateSeries
	Labels []tlText // the y axis: its top and bottom values
}

type rateSeries struct {
	Class  string
	Label  string
	Points string // "x,y x,y ..."
}

const (
	rateSlices = 120
	ratePanelH = 90
	rateGap    = 28
)

// NewRateChart lays out the rate and latency of h's operations; it
// returns false when h has no completed operation (holdings alone, as a
// leader election's, have no rate to show).
func NewRateChart(h history.History) (RateChart, bool) {
	span := float64(h.End - h.Start)
	if span <= 0 {
		return RateChart{}, false
	}
	slice := span / rateSlices
	ok, fail := make([]float64, rateSlices), make([]float64, rateSlices)
	lat := make([][]time.Duration, rateSlices)
	done := 0
	for _, o := range history.Operations(h) {
		if o.Result == history.KindUnknown || o.Return == math.MaxInt64 {
			continue
		}
		i := int(float64(o.Return-h.Start) / slice)
		if i < 0 || i >= rateSlices {
			continue
		}
		done++
		if o.Result == history.KindOK {
			ok[i]++
		} else {
			fail[i]++
		}
		lat[i] = append(lat[i], time.Duration(o.Return-o.Call))
	}
	if done == 0 {
		return RateChart{}, false
	}
	plot := float64(tlWidth - tlLeft - 10)
	x := func(i int) float64 { return tlLeft + plot*(float64(i)+0.5)/rateSlices }
	perSec := time.Second.Seconds() / time.Duration(slice).Seconds()
	c := RateChart{Width: tlWidth}

	// rate panel, linear from 0
	top := 20.0
	maxRate := 1.0
	for i := range ok {
		ok[i], fail[i] = ok[i]*perSec, fail[i]*perSec
		maxRate = math.Max(maxRate, math.Max(ok[i], fail[i]))
	}
	yRate := func(v float64) float64 { return top + ratePanelH*(1-v/maxRate) }
	rp := ratePanel{Title: "operations per second", Top: top, Height: ratePanelH}
	rp.Series = append(rp.Series, rateSeries{Class: "rate-ok", Label: "ok", Points: points(ok, x, yRate)},
		rateSeries{Class: "rate-fail", Label: "failed", Points: points(fail, x, yRate)})
	rp.Labels = []tlText{{X: tlLeft - 6, Y: top + 10, Text: strconv.FormatFloat(maxRate, 'f', 0, 64)}, {X: tlLeft - 6, Y: top + ratePanelH, Text: "0"}}
	c.Panels = append(c.Panels, rp)

	// latency panel, log scale between the smallest and largest latency
	top += ratePanelH + rateGap
	med, hi := make([]float64, rateSlices), make([]float64, rateSlices)
	lo, up := math.Inf(1), 0.0
	for i, ls := range lat {
		if len(ls) == 0 {
			med[i], hi[i] = math.NaN(), math.NaN()
			continue
		}
		sort.Slice(ls, func(a, b int) bool { return ls[a] < ls[b] })
		med[i], hi[i] = millis(ls[len(ls)/2]), millis(ls[len(ls)-1])
		lo, up = math.Min(lo, med[i]), math.Max(up, hi[i])
	}
	lo = math.Max(lo, 0.1)
	up = math.Max(up, lo*10)
	yLat := func(v float64) float64 {
		v = math.Max(v, lo)
		return top + ratePanelH*(1-(math.Log10(v)-math.Log10(lo))/(math.Log10(up)-math.Log10(lo)))
	}
	lp := ratePanel{Title: "latency (ms, log scale)", Top: top, Height: ratePanelH}
	lp.Series = append(lp.Series, rateSeries{Class: "lat-max", Label: "largest", Points: points(hi, x, yLat)},
		rateSeries{Class: "lat-med", Label: "median", Points: points(med, x, yLat)})
	lp.Labels = []tlText{{X: tlLeft - 6, Y: top + 10, Text: latLabel(up)}, {X: tlLeft - 6, Y: top + ratePanelH, Text: latLabel(lo)}}
	c.Panels = append(c.Panels, lp)

	c.Bottom = int(top + ratePanelH)
	c.Height = c.Bottom + 20
	xt := func(t int64) float64 { return tlLeft + plot*float64(t-h.Start)/span }
	for _, w := range checkers.FaultWindows(h) {
		c.Faults = append(c.Faults, tlRect{X: xt(w.Start), Y: 14, W: math.Max(xt(w.End)-xt(w.Start), 2), H: float64(c.Bottom) - 14, Class: "fault",
			Title: fmt.Sprintf("%s, %s to %s", w.Fault, history.Rel(h, w.Start), history.Rel(h, w.End))})
	}
	for _, tk := range ticks(time.Duration(span)) {
		c.Ticks = append(c.Ticks, tlTick{X: xt(h.Start + int64(tk)), Label: tk.String()})
	}
	return c, true
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func latLabel(v float64) string {
	if v >= 1000 {
		return strconv.FormatFloat(v/1000, 'g', 3, 64) + " s"
	}
	return strconv.FormatFloat(v, 'g', 3, 64) + " ms"
}

// points renders the series vs as polyline points; a slice without a
// value (NaN) is skipped.
func points(vs []float64, x func(int) float64, y func(float64) float64) string {
	var b strings.Builder
	for i, v := range vs {
		if math.IsNaN(v) {
			continue
		}
		fmt.Fprintf(&b, "%.1f,%.1f ", x(i), y(v))
	}
	return strings.TrimSpace(b.String())
}

// ticks returns the axis's ticks over span: a round step, about 10 of them.
func ticks(span time.Duration) []time.Duration {
	step := time.Second
	for _, s := range []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute} {
		step = s
		if span/s <= 12 {
			break
		}
	}
	var out []time.Duration
	for d := time.Duration(0); d <= span; d += step {
		out = append(out, d)
	}
	return out
}
