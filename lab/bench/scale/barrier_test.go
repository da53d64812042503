package scale

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/bench"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// TestBarrierSeries runs the barrier series quick (2 and 5 members) on a
// 1-server ensemble: every figure has a curve per implementation; our
// member enters with 1 exists + 1 create + 1 getChildren (plus the one
// create of "ready" among them all) and leaves with a listing, a watch and
// its delete at least; bytes received per member grow with the members
// listed.
func TestBarrierSeries(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a ZooKeeper ensemble")
	}
	e := testenv.New(t, testenv.Config{Servers: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	env := &Env{Ensemble: e, Impls: bench.AllImpls, SessionTimeout: 3 * time.Second, Budget: time.Minute,
		Quick: true, Progress: tlog{t}}
	t0 := time.Now()
	figs, err := runBarrier(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("barrier series took %s", time.Since(t0).Round(time.Millisecond))
	if len(figs) != len(barMetrics) {
		t.Fatalf("%d figures, want %d", len(figs), len(barMetrics))
	}
	get := func(metric, impl string) map[float64]float64 {
		return qbCurve(t, qbFigure(t, figs, metric, env.Impls), impl, 2, 5)
	}
	impls := []string{bench.ImplZkrecipes}
	for _, impl := range []string{bench.ImplCurator, bench.ImplKazoo} {
		if err := bench.Available(impl); err != nil {
			t.Logf("%s not run: %v", impl, err)
			continue
		}
		impls = append(impls, impl)
	}
	for _, impl := range impls {
		for _, m := range barMetrics {
			for x, v := range get(m.name, impl) {
				if v <= 0 {
					t.Errorf("%s %s at %v members: %v", m.name, impl, x, v)
				}
			}
		}
		for x, v := range get("barrier-enter-requests", impl) {
			if v < 3 {
				t.Errorf("%s enter at %v members: %v requests per member, want >= 3 (exists, create, getChildren)", impl, x, v)
			}
		}
		for x, v := range get("barrier-leave-requests", impl) {
			if v < 2 {
				t.Errorf("%s leave at %v members: %v requests per member, want >= 2 (getChildren, delete)", impl, x, v)
			}
		}
	}
	for x, v := range get("barrier-enter-requests", bench.ImplZkrecipes) {
		if want := 3 + 1/x; v < want || v > want+1 {
			t.Errorf("zkrecipes enter at %v members: %v requests per member, want about %v", x, v, want)
		}
	}
	if b := get("barrier-bytes-in", bench.ImplZkrecipes); b[5] <= b[2] {
		t.Errorf("zkrecipes bytes in per member %v: want more with more members listed", b)
	}
	gozk := qbFigure(t, figs, "barrier-enter-ms", env.Impls).Curves[1]
	if len(gozk.Points) != 0 || !strings.Contains(gozk.Note, "no barrier recipe") {
		t.Errorf("go-zookeeper curve: %+v", gozk)
	}
}
