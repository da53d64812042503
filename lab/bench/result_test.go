package bench

import (
	"encoding/json"
	"encoding/xml"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sampleReport() *Report {
	return &Report{
		Command: "go run ./lab/cmd/zkbench", Backend: "containers", Servers: 3, CPUs: 2,
		Results: []Result{
			{Workload: WRoundTrip, Impl: ImplZkrecipes, Unit: "ms", Lower: true, Value: 0.8, P99: 2, Ops: 200,
				Cost: Cost{Requests: 1}, Floor: floorRoundTrip},
			{Workload: "uncontended", Impl: ImplZkrecipes, Unit: "ms", Lower: true, Value: 2, P99: 5, Ops: 200,
				Cost: Cost{Requests: 3, Lists: 1}, Floor: floorUncontended},
			{Workload: "uncontended", Impl: ImplCurator, Unit: "ms", Lower: true, Value: 4, P99: 9, Ops: 200,
				Cost: Cost{Requests: 3, Lists: 1}, Floor: floorUncontended},
			{Workload: "contended-8", Impl: ImplZkrecipes, Unit: "handoffs/s", Value: 100, Ops: 300,
				Cost: Cost{Requests: 4, Lists: 1, Notifications: 1}, Floor: floorContended},
			{Workload: "contended-8", Impl: ImplKazoo, Unit: "handoffs/s", Value: 150, Ops: 450,
				Cost: Cost{Requests: 6.5, Lists: 2.5, Notifications: 1}, Floor: floorContended},
			{Workload: "queue-put", Impl: ImplGoZK, Err: "no such recipe in the library"},
			{Workload: "rwlock-mix", Impl: ImplCurator, Unit: "ops/s", Value: 80,
				Cost: Cost{Requests: 3.7, Lists: 1.3, Notifications: 0.3}, Floor: floorRW},
		},
	}
}

func TestComputeSpeeds(t *testing.T) {
	rep := sampleReport()
	rep.ComputeSpeeds()
	want := map[string]float64{
		"uncontended/" + ImplZkrecipes: 1, "uncontended/" + ImplCurator: 0.5, // lower is better: 2/4
		"contended-8/" + ImplZkrecipes: 1, "contended-8/" + ImplKazoo: 1.5, // higher is better: 150/100
		"queue-put/" + ImplGoZK:     0, // did not run
		"rwlock-mix/" + ImplCurator: 0, // no zkrecipes figure to compare with
	}
	// Latencies in round trips of the run's round-trip row (0.8 ms).
	trips := map[string]float64{
		WRoundTrip + "/" + ImplZkrecipes: 1, "uncontended/" + ImplZkrecipes: 2.5, "uncontended/" + ImplCurator: 5,
	}
	for _, r := range rep.Results {
		if w := want[r.Workload+"/"+r.Impl]; r.Workload != WRoundTrip && math.Abs(r.Speed-w) > 1e-9 {
			t.Errorf("%s %s: speed %v, want %v", r.Workload, r.Impl, r.Speed, w)
		}
		if w := trips[r.Workload+"/"+r.Impl]; math.Abs(r.RoundTrips-w) > 1e-9 {
			t.Errorf("%s %s: %v round trips, want %v", r.Workload, r.Impl, r.RoundTrips, w)
		}
	}
	// Without a zkrecipes round trip, go-zookeeper's is the floor; with
	// neither, no latency is counted in round trips.
	rep.Results[0].Impl = ImplGoZK
	rep.ComputeSpeeds()
	if got := rep.Results[1].RoundTrips; math.Abs(got-2.5) > 1e-9 {
		t.Errorf("against go-zookeeper's round trip: %v, want 2.5", got)
	}
	rep.Results = rep.Results[1:]
	rep.ComputeSpeeds()
	for _, r := range rep.Results {
		if r.RoundTrips != 0 {
			t.Errorf("%s %s: %v round trips without a round-trip row", r.Workload, r.Impl, r.RoundTrips)
		}
	}
}

func TestAtFloor(t *testing.T) {
	tests := []struct {
		cost  Cost
		floor Floor
		want  bool
	}{
		{Cost{Requests: 3, Lists: 1}, floorUncontended, true},
		{Cost{Requests: 3.04, Lists: 1}, floorUncontended, true}, // within the slack
		{Cost{Requests: 4, Lists: 1}, floorUncontended, false},
		{Cost{Requests: 3, Lists: 1, Notifications: 1}, floorUncontended, false},
		{Cost{Requests: 3.9, Lists: 1, Notifications: 0.97}, floorContended, true},
		{Cost{Requests: 4, Lists: 1.5, Notifications: 1}, floorContended, false},
		{Cost{Requests: 4, Lists: 1, Notifications: 3}, floorRW, true}, // no notification floor
	}
	for _, tt := range tests {
		if got := (Result{Cost: tt.cost, Floor: tt.floor}).AtFloor(); got != tt.want {
			t.Errorf("AtFloor(%+v against %+v) = %v, want %v", tt.cost, tt.floor, got, tt.want)
		}
	}
}

func TestRows(t *testing.T) {
	rep := sampleReport()
	rep.ComputeSpeeds()
	rows := rep.Rows()
	if len(rows) != len(rep.Results) {
		t.Fatalf("%d rows for %d results", len(rows), len(rep.Results))
	}
	want := [][]string{
		{"write-round-trip", "zkrecipes", "0.80 ms (p99 2.00)", "1.00", "1.00", "1.00 (1.00)", "0 (0)", "0 (0)"},
		{"uncontended", "zkrecipes", "2.00 ms (p99 5.00)", "2.50", "1.00", "3.00 (3.00)", "1.00 (1.00)", "0 (0)"},
		{"uncontended", "curator", "4.00 ms (p99 9.00)", "5.00", "0.50", "3.00 (3.00)", "1.00 (1.00)", "0 (0)"},
		{"contended-8", "zkrecipes", "100 handoffs/s", "—", "1.00", "4.00 (4.00)", "1.00 (1.00)", "1.00 (1.00)"},
		{"contended-8", "kazoo", "150 handoffs/s", "—", "1.50", "6.50 (4.00) !", "2.50 (1.00) !", "1.00 (1.00)"},
		{"queue-put", "go-zookeeper", "n/a: no such recipe in the library", "—", "—", "—", "—", "—"},
		{"rwlock-mix", "curator", "80.0 ops/s", "—", "?", "3.70 (4.00)", "1.30 (1.00) !", "0.30"},
	}
	for i := range want {
		if strings.Join(rows[i], " | ") != strings.Join(want[i], " | ") {
			t.Errorf("row %d:\n got %q\nwant %q", i, rows[i], want[i])
		}
	}
}

func TestMarkdownAndText(t *testing.T) {
	rep := sampleReport()
	rep.ComputeSpeeds()
	var md, txt strings.Builder
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(md.String()), "\n")
	if len(lines) != 2+len(rep.Results) {
		t.Fatalf("markdown has %d lines, want %d:\n%s", len(lines), 2+len(rep.Results), md.String())
	}
	for _, l := range lines {
		if strings.Count(l, "|") != len(Header)+1 {
			t.Errorf("markdown line with %d pipes: %q", strings.Count(l, "|"), l)
		}
	}
	if err := rep.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	tl := strings.Split(strings.TrimSpace(txt.String()), "\n")
	if len(tl) != 2+len(rep.Results) || !strings.HasPrefix(tl[1], "---") {
		t.Fatalf("text table:\n%s", txt.String())
	}
	// Columns line up: "implementation" starts at the same rune everywhere.
	col := strings.Index(tl[0], "implementation")
	for _, l := range tl[2:] {
		r := []rune(l)
		if r[col-1] != ' ' || r[col] == ' ' {
			t.Errorf("misaligned row %q", l)
		}
	}
}

func TestJSONAndSVG(t *testing.T) {
	rep := sampleReport()
	rep.ComputeSpeeds()
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil || len(back.Results) != len(rep.Results) || back.Results[2].Speed != 0.5 || back.Results[2].RoundTrips != 5 {
		t.Fatalf("JSON round trip: %v %+v", err, back.Results)
	}
	svg := rep.SVG()
	if err := xml.Unmarshal([]byte(svg), new(struct{ XMLName xml.Name })); err != nil {
		t.Fatalf("SVG is not well-formed XML: %v\n%s", err, svg)
	}
	if n := strings.Count(svg, "<title>"); n != 5 { // one bar per result with a speed
		t.Errorf("SVG has %d bars, want 5:\n%s", n, svg)
	}
	if !strings.Contains(svg, "go-zookeeper: n/a") || !strings.Contains(svg, "no zkrecipes figure") {
		t.Error("SVG does not mark the results without a bar")
	}
}

func TestWorkloadKind(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"queue-take-4", "queue-take"},
		{"queue-take-4-spread", "queue-take-4-spread"},
		{"contended-32", "contended"},
		{"leader-expiry", "leader-expiry"},
		{"uncontended", "uncontended"},
		{"counter-", "counter-"},
		{"-8", "-8"},
		{"", ""},
	} {
		if got := workloadKind(c.in); got != c.want {
			t.Errorf("workloadKind(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestBehind(t *testing.T) {
	rep := &Report{Results: []Result{
		{Workload: "queue-take-4", Impl: ImplZkrecipes, Unit: "items/s", Value: 200},
		{Workload: "queue-take-4", Impl: ImplKazoo, Unit: "items/s", Value: 300},
		{Workload: "queue-take-4", Impl: ImplCurator, Unit: "items/s", Value: 150},
		{Workload: "rwlock-mix", Impl: ImplZkrecipes, Unit: "ops/s", Value: 100},
		{Workload: "rwlock-mix", Impl: ImplCurator, Unit: "ops/s", Value: 110},
		{Workload: "uncontended", Impl: ImplZkrecipes, Unit: "ms", Lower: true, Value: 2},
		{Workload: "uncontended", Impl: ImplGoZK, Unit: "ms", Lower: true, Value: 2},
		{Workload: "contended-8", Impl: ImplZkrecipes, Unit: "handoffs/s", Value: 100},
		{Workload: "contended-8", Impl: ImplGoZK, Unit: "handoffs/s", Err: "boom"},
		{Workload: WRoundTrip, Impl: ImplZkrecipes, Unit: "ms", Lower: true, Value: 2},
		{Workload: WRoundTrip, Impl: ImplGoZK, Unit: "ms", Lower: true, Value: 1.8},
	}}
	rep.ComputeSpeeds()
	got := rep.Behind()
	if len(got) != 2 {
		t.Fatalf("Behind() = %q, want the kazoo queue row and the curator rwlock row only", got)
	}
	if !strings.HasPrefix(got[0], "queue-take-4: kazoo 1.50x faster") || !strings.Contains(got[0], costNotes["queue-take"]) {
		t.Errorf("queue row: %q", got[0])
	}
	if !strings.HasPrefix(got[1], "rwlock-mix: curator 1.10x faster") || !strings.HasSuffix(got[1], "not explained") {
		t.Errorf("rwlock row: %q", got[1])
	}
	dir := t.TempDir()
	if err := rep.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "- "+got[0]) || !strings.Contains(string(md), "- "+got[1]) {
		t.Errorf("results.md does not list the rows a peer won:\n%s", md)
	}
}
