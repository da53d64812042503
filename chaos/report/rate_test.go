package report

import (
	"strings"
	"testing"
)

func TestRateChart(t *testing.T) {
	// 12 s: an operation every 10 ms (100/s) of 2 ms, but none from 4 s to
	// 6 s (the fault), and one of 1.5 s right after it.
	b := newHB(12000).fault("cut-short", 4000, 6000)
	for at := int64(0); at < 12000; at += 10 {
		if at >= 4000 && at < 6000 {
			continue
		}
		b.read("c1", "/r", at, at+2, 0)
	}
	b.read("c2", "/r", 4500, 6000, 0)
	c, ok := NewRateChart(b.build())
	if !ok {
		t.Fatal("no chart for a history of operations")
	}
	if len(c.Panels) != 2 || len(c.Faults) != 1 || c.Faults[0].Title != "cut-short, 4s to 6s" {
		t.Fatalf("panels %d, faults %+v", len(c.Panels), c.Faults)
	}
	rate, lat := c.Panels[0], c.Panels[1]
	// 10 per 100 ms slice, 11 in the slice where the slow one returns
	if top := rate.Labels[0].Text; top != "110" {
		t.Errorf("rate axis tops at %s/s, want 110", top)
	}
	if n := len(strings.Fields(rate.Series[0].Points)); n != rateSlices {
		t.Errorf("ok rate: %d points, want one per slice (%d)", n, rateSlices)
	}
	if got := lat.Labels[0].Text; got != "1.5 s" {
		t.Errorf("latency axis tops at %s, want 1.5 s (the slow operation)", got)
	}
	// latency only where operations completed: not in the fault's slices
	if n := len(strings.Fields(lat.Series[1].Points)); n >= rateSlices || n < rateSlices*3/4 {
		t.Errorf("median latency: %d points of %d slices", n, rateSlices)
	}
	if _, ok := NewRateChart(newHB(1000).hold("c1", "/l", 1, 0, 500).build()); ok {
		t.Error("a chart for a history without operations")
	}
	var page strings.Builder
	r := ScenarioResult{Scenario: "register/cut-short", History: b.build()}
	if err := WriteDetail(&page, Summary{}, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "Rate and latency") || strings.Count(page.String(), "<polyline") != 4 {
		t.Errorf("the scenario's page lacks the rate chart")
	}
}
