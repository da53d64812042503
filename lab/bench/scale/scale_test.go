package scale

import (
	"strings"
	"testing"
)

func TestNum(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {1, "1"}, {100, "100"}, {12.5, "12.5"}, {0.125, "0.125"}, {2.0004, "2"}, {1500, "1500"}, {0.00001, "1e-05"},
	} {
		if got := num(tc.v); got != tc.want {
			t.Errorf("num(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// The chart places each curve's points by log10 and leaves out what a log
// scale cannot show; the table keeps every point.
func TestFigureOutputs(t *testing.T) {
	f := Figure{Name: "x", Title: "requests per handoff", XLabel: "contenders", YLabel: "requests",
		Curves: []Curve{
			{Impl: "zkrecipes", Points: []Point{{2, 3}, {20, 3}, {200, 3}}},
			{Impl: "curator", Points: []Point{{2, 3}, {20, 0}, {200, 30}}, Note: "stopped at 200"},
		}}
	svg := f.SVG()
	if got := strings.Count(svg, "<circle"); got != 5 {
		t.Errorf("%d markers, want 5 (the zero is left out):\n%s", got, svg)
	}
	if !strings.Contains(svg, "<polyline") || !strings.Contains(svg, "curator") {
		t.Errorf("no curve or legend:\n%s", svg)
	}
	var md strings.Builder
	f.Markdown(&md)
	for _, want := range []string{"| contenders | zkrecipes | curator |", "| 20 | 3 | 0 |", "| 200 | 3 | 30 |", "curator: stopped at 200"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if empty := (Figure{Title: "t"}).SVG(); !strings.Contains(empty, "no points") {
		t.Errorf("empty figure: %s", empty)
	}
}
