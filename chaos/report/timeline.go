package report

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// Timeline is the geometry of one scenario's picture, drawn as inline SVG
// on the scenario's page: a row per client with its operations' outcomes
// (a strip of buckets: green = something succeeded, orange = an outcome was
// unknown, red = only failures; a run of buckets of one colour is one
// rectangle) and its holdings as bars (holdings less than a pixel apart
// merged), fault windows shaded over every row as injected (titled with
// the target each struck), crashes and resumptions as ticks on their
// client's row, and violations marked in red.
type Timeline struct {
	Width, Height int
	Rows          []tlText // client names, left column
	Rects         []tlRect
	Paths         []tlPath
	Ticks         []tlTick
	Marks         []tlRect // violations
}

type tlRect struct {
	X, Y, W, H float64
	Class      string
	Title      string
	Label      string
	Opacity    float64 // 0: the class's
	// Group, when set, names the group the rectangle belongs to, and
	// titles it when the group is drawn as one path (see collapse).
	Group string
}

// tlPath is a group of rectangles drawn as one shape.
type tlPath struct {
	Class, D, Title string
	Opacity         float64
}

type tlText struct {
	X, Y float64
	Text string
}

type tlTick struct {
	X     float64
	Label string
}

const (
	tlWidth   = 1200
	tlLeft    = 80
	tlTop     = 22
	tlRow     = 26
	tlBuckets = 300
	// holdMergePx: a client's holdings closer than this many pixels are
	// drawn as one bar.
	holdMergePx = 4
)

// NewTimeline lays out h; violations are marked at their times.
func NewTimeline(h history.History, results []checkers.Result) Timeline {
	clients := h.Clients()
	sort.Strings(clients)
	span := float64(h.End - h.Start)
	if span <= 0 {
		span = 1
	}
	plot := float64(tlWidth - tlLeft - 10)
	x := func(t int64) float64 {
		v := tlLeft + plot*float64(t-h.Start)/span
		if v < tlLeft {
			return tlLeft
		}
		return v
	}
	t := Timeline{Width: tlWidth, Height: tlTop + tlRow*len(clients) + 24}
	row := map[string]int{}
	for i, c := range clients {
		row[c] = i
		t.Rows = append(t.Rows, tlText{X: tlLeft - 6, Y: float64(tlTop + i*tlRow + 17), Text: c})
	}
	bottom := float64(tlTop + tlRow*len(clients))

	// fault windows, titled with what they struck
	for _, w := range checkers.FaultWindows(h) {
		struck := "target not recorded"
		if w.Target != nil {
			struck = w.Target.String()
		}
		t.Rects = append(t.Rects, tlRect{X: x(w.Start), Y: tlTop - 16, W: max(x(w.End)-x(w.Start), 2), H: bottom - tlTop + 16,
			Class: "fault", Title: fmt.Sprintf("%s: %s, %s to %s", w.Fault, struck, history.Rel(h, w.Start), history.Rel(h, w.End)), Label: w.Fault})
	}

	// operation outcome strips
	type bucket struct{ ok, fail, unknown int }
	strips := map[string][]bucket{}
	for _, o := range history.Operations(h) {
		if _, ok := row[o.Client]; !ok {
			continue
		}
		at := o.Return
		if o.Result == history.KindUnknown {
			at = o.Call
		}
		i := int(float64(at-h.Start) / span * tlBuckets)
		if i < 0 || i >= tlBuckets {
			continue
		}
		if strips[o.Client] == nil {
			strips[o.Client] = make([]bucket, tlBuckets)
		}
		switch o.Result {
		case history.KindOK:
			strips[o.Client][i].ok++
		case history.KindFail:
			strips[o.Client][i].fail++
		default:
			strips[o.Client][i].unknown++
		}
	}
	// A run of buckets of one class is one rectangle, titled with its
	// counts: a strip has a few rectangles, not one per bucket.
	bw := plot / tlBuckets
	class := func(b bucket) string {
		switch {
		case b.unknown > 0:
			return "op-unknown"
		case b.ok > 0:
			return "op-ok"
		case b.fail > 0:
			return "op-fail"
		}
		return ""
	}
	at := func(i int) string {
		return time.Duration(float64(i) * span / tlBuckets).Round(time.Millisecond).String()
	}
	for _, c := range clients {
		bs := strips[c]
		y := float64(tlTop + row[c]*tlRow + 16)
		for i := 0; i < len(bs); {
			cl := class(bs[i])
			j, sum := i, bucket{}
			for j < len(bs) && class(bs[j]) == cl {
				sum.ok, sum.fail, sum.unknown = sum.ok+bs[j].ok, sum.fail+bs[j].fail, sum.unknown+bs[j].unknown
				j++
			}
			if cl != "" {
				t.Rects = append(t.Rects, tlRect{X: tlLeft + float64(i)*bw, Y: y, W: float64(j-i)*bw + 0.3, H: 6, Class: cl, Group: c + ": " + groupTitle[cl],
					Title: fmt.Sprintf("%s %s to %s: %d ok, %d failed, %d unknown", c, at(i), at(j), sum.ok, sum.fail, sum.unknown)})
			}
			i = j
		}
	}

	// holdings: those of a client less than holdMergePx pixels apart, of
	// one key in one mode, released, are one bar (a lock changes hands
	// every few milliseconds: each holding is under a pixel), titled with
	// their count, span and the share of it they held, which the bar's
	// opacity shows; a lone holding, and one that ended lost, is a bar of
	// its own titled with its token and end.
	type bar struct {
		client, class, key string
		from, to           int64
		held               int64 // time held in total
		first              history.Holding
		n                  int
	}
	var bars []bar
	open := map[string]int{} // client/class -> index in bars of its last bar
	gap := int64(holdMergePx * span / plot)
	for _, hd := range history.Holdings(h) {
		if _, ok := row[hd.Client]; !ok {
			continue
		}
		class := "hold"
		if hd.Mode == "read" {
			class = "hold-read"
		}
		id := hd.Client + "/" + class
		if i, ok := open[id]; ok && bars[i].key == hd.Key && hd.From-bars[i].to < gap && hd.Ended == history.KindReleased && bars[i].first.Ended == history.KindReleased {
			bars[i].to = max(bars[i].to, hd.To)
			bars[i].held += hd.To - hd.From
			bars[i].n++
			continue
		}
		open[id] = len(bars)
		bars = append(bars, bar{client: hd.Client, class: class, key: hd.Key, from: hd.From, to: hd.To, held: hd.To - hd.From, first: hd, n: 1})
	}
	for _, b := range bars {
		share := 1.0
		if b.to > b.from {
			share = float64(b.held) / float64(b.to-b.from)
		}
		title := fmt.Sprintf("%s holds %s %d times, %s to %s (held %.0f%% of that time)", b.client, b.key, b.n, history.Rel(h, b.from), history.Rel(h, b.to), 100*share)
		opacity := 0.0
		if b.n > 1 {
			opacity = max(share, 0.3)
		}
		if b.n == 1 {
			hd := b.first
			end := "to the end"
			if hd.Ended != "" {
				end = string(hd.Ended)
			}
			title = fmt.Sprintf("%s holds %s (token %d) %s to %s, %s", hd.Client, hd.Key, hd.Token, history.Rel(h, hd.From), history.Rel(h, hd.To), end)
		}
		t.Rects = append(t.Rects, tlRect{X: x(b.from), Y: float64(tlTop + row[b.client]*tlRow + 3), W: max(x(b.to)-x(b.from), 1.5), H: 11, Class: b.class, Title: title, Opacity: opacity,
			Group: b.client + " holds " + b.key + " (bars merged into one shape: too many to title each)"})
	}

	// crashes and resumptions (the two-phase workload's): a tick on the
	// client's row
	for _, e := range h.Events {
		r, ok := row[e.Client]
		if !ok || (e.Kind != history.KindCrash && e.Kind != history.KindResume) {
			continue
		}
		t.Rects = append(t.Rects, tlRect{X: x(e.Time) - 1, Y: float64(tlTop + r*tlRow), W: 2, H: 22, Class: string(e.Kind),
			Title: fmt.Sprintf("%s %s %s (%s) at %s", e.Client, e.Kind, e.Key, e.Detail, history.Rel(h, e.Time))})
	}

	// violations
	for _, res := range results {
		for _, v := range res.Violations {
			t.Marks = append(t.Marks, tlRect{X: x(v.Time) - 1, Y: tlTop - 4, W: 2, H: bottom - tlTop + 4, Class: "violation",
				Title: res.Checker + ": " + v.Msg})
		}
	}

	// axis: a tick at a round step, about 10 over the span
	for _, d := range ticks(time.Duration(span)) {
		t.Ticks = append(t.Ticks, tlTick{X: x(h.Start + int64(d)), Label: d.String()})
	}
	t.collapse()
	return t
}

// groupTitle titles a client's strip of one outcome drawn as one shape.
var groupTitle = map[string]string{
	"op-ok": "operations succeeded (slices of time)", "op-fail": "only failures (slices of time)", "op-unknown": "outcomes unknown (slices of time)",
}

// maxTitled is the most rectangles of one group (a client's strip of one
// outcome, its holdings of one key) drawn each with its own title; above
// it they are one path titled for the group, so that a busy scenario
// (a leadership changing hands hundreds of times) stays small.
const maxTitled = 40

// collapse turns each group of more than maxTitled rectangles into one
// path (per opacity), keeping the others as they are.
func (t *Timeline) collapse() {
	type key struct {
		group, class string
		opacity      float64
	}
	count := map[string]int{}
	for _, r := range t.Rects {
		if r.Group != "" {
			count[r.Group]++
		}
	}
	at := map[key]int{}
	kept := t.Rects[:0]
	for _, r := range t.Rects {
		if r.Group == "" || count[r.Group] <= maxTitled {
			kept = append(kept, r)
			continue
		}
		k := key{r.Group, r.Class, math.Round(r.Opacity*4) / 4}
		i, ok := at[k]
		if !ok {
			i = len(t.Paths)
			at[k] = i
			t.Paths = append(t.Paths, tlPath{Class: r.Class, Title: fmt.Sprintf("%s, %d shapes", r.Group, count[r.Group]), Opacity: k.opacity})
		}
		t.Paths[i].D += fmt.Sprintf("M%.1f %.1fh%.1fv%.1fh%.1fz", r.X, r.Y, r.W, r.H, -r.W)
	}
	t.Rects = kept
}

// Bottom is the y of the axis.
func (t Timeline) Bottom() int { return t.Height - 20 }
