package scale

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/bench"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// tlog is a Progress writer into the test's log.
type tlog struct{ t *testing.T }

func (w tlog) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// qbFigure finds a figure by name and checks its shape: one curve per
// implementation, in env's order.
func qbFigure(t *testing.T, figs []Figure, name string, impls []string) Figure {
	t.Helper()
	for _, f := range figs {
		if f.Name != name {
			continue
		}
		if len(f.Curves) != len(impls) || f.Title == "" || f.XLabel == "" || f.YLabel == "" || len(f.Notes) == 0 {
			t.Fatalf("figure %s malformed: %+v", name, f)
		}
		for i, c := range f.Curves {
			if c.Impl != impls[i] {
				t.Fatalf("figure %s: curve %d is %s, want %s", name, i, c.Impl, impls[i])
			}
		}
		return f
	}
	t.Fatalf("no figure %s", name)
	return Figure{}
}

// qbCurve returns impl's curve of f as a map from X to Y, after checking
// that it has a point at each of xs, in order.
func qbCurve(t *testing.T, f Figure, impl string, xs ...float64) map[float64]float64 {
	t.Helper()
	for _, c := range f.Curves {
		if c.Impl != impl {
			continue
		}
		if len(c.Points) != len(xs) {
			t.Fatalf("%s %s: points %v, want x = %v (note: %s)", f.Name, impl, c.Points, xs, c.Note)
		}
		out := map[float64]float64{}
		for i, p := range c.Points {
			if p.X != xs[i] {
				t.Fatalf("%s %s: points %v, want x = %v", f.Name, impl, c.Points, xs)
			}
			out[p.X] = p.Y
		}
		return out
	}
	t.Fatalf("%s: no curve of %s", f.Name, impl)
	return nil
}

// The layout arithmetic behind the break's note: ZooKeeper's Java client
// (3.8.0) reads a reply of at most 0xfffff bytes after its length prefix;
// Curator lists with getChildren2 (the parent's Stat, 68 bytes, follows
// the names), so its 13-character names make 61,676 items the first
// listing it refuses.
func TestQueueListingBytes(t *testing.T) {
	for _, prefix := range []string{"qn-", "entry-100-"} {
		for _, stat := range []int{0, qStatBytes} {
			n := 0
			for qListingBytes(prefix, n, stat)-4 <= qJavaLimit {
				n++
			}
			if got := qJavaBreak(prefix, stat); got != n {
				t.Errorf("qJavaBreak(%q, %d) = %d, want %d (the first listing over %d bytes)", prefix, stat, got, n, qJavaLimit)
			}
		}
	}
	if got := qJavaBreak("qn-", qStatBytes); got != 61_676 {
		t.Errorf("first refused Curator listing at %d items, want 61676", got)
	}
	if got := qListingBytes("entry-100-", 1, 0); got != 4+16+4+4+20 {
		t.Errorf("kazoo listing of 1 item: %d bytes", got)
	}
}

// TestQueueSeries runs the queue series quick (1,000 and 2,000 items, 20
// puts and takes each) on a 1-server ensemble: every figure has a curve
// per implementation; zkrecipes' put is 1 request, its take 2 requests
// plus a listing shared by the 20 takes, whose bytes grow with the queue;
// Curator's take lists the whole queue each time.
func TestQueueSeries(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a ZooKeeper ensemble")
	}
	e := testenv.New(t, testenv.Config{Servers: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	env := &Env{Ensemble: e, Impls: bench.AllImpls, SessionTimeout: 3 * time.Second, Budget: time.Minute,
		Quick: true, Progress: tlog{t}}
	t0 := time.Now()
	figs, err := runQueue(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("queue series took %s", time.Since(t0).Round(time.Millisecond))
	if len(figs) != len(qMetrics) {
		t.Fatalf("%d figures, want %d", len(figs), len(qMetrics))
	}
	get := func(metric, impl string) map[float64]float64 {
		return qbCurve(t, qbFigure(t, figs, metric, env.Impls), impl, 1000, 2000)
	}
	for _, m := range qMetrics {
		for _, p := range get(m.name, bench.ImplZkrecipes) {
			if p <= 0 {
				t.Errorf("%s zkrecipes: %v", m.name, p)
			}
		}
	}
	for x, v := range get("queue-put-requests", bench.ImplZkrecipes) {
		if v != 1 {
			t.Errorf("zkrecipes put at %v items: %v requests, want 1 (one create)", x, v)
		}
	}
	for x, v := range get("queue-take-requests", bench.ImplZkrecipes) {
		if v <= 2 || v > 2+2.0/qQuickOps {
			t.Errorf("zkrecipes take at %v items: %v requests, want 2 + one listing per %d takes", x, v, qQuickOps)
		}
	}
	if b := get("queue-take-bytes-in", bench.ImplZkrecipes); b[2000] <= b[1000] || b[1000] < 17*1000/qQuickOps {
		t.Errorf("zkrecipes take bytes in: %v, want a share of the listing, growing with the queue", b)
	}
	gozk := qbFigure(t, figs, "queue-take-ms", env.Impls).Curves[1]
	if len(gozk.Points) != 0 || !strings.Contains(gozk.Note, "no queue recipe") {
		t.Errorf("go-zookeeper curve: %+v", gozk)
	}
	if bench.Available(bench.ImplCurator) == nil {
		for x, v := range get("queue-take-requests", bench.ImplCurator) {
			if v < 3 {
				t.Errorf("curator take at %v items: %v requests, want >= 3 (a listing per take)", x, v)
			}
		}
		for x, v := range get("queue-take-bytes-in", bench.ImplCurator) {
			if v < 17*x {
				t.Errorf("curator take at %v items: %v bytes in, want the whole listing (>= %v)", x, v, 17*x)
			}
		}
	} else {
		t.Logf("curator not run: %v", bench.Available(bench.ImplCurator))
	}
	if bench.Available(bench.ImplKazoo) == nil {
		for x, v := range get("queue-take-requests", bench.ImplKazoo) {
			if v < 2 || v > 3 {
				t.Errorf("kazoo take at %v items: %v requests, want 2 + a shared listing", x, v)
			}
		}
	} else {
		t.Logf("kazoo not run: %v", bench.Available(bench.ImplKazoo))
	}
}
