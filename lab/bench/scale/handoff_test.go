package scale

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/bench"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// handoffEnv is a Quick run of every implementation that can run here on a
// 1-server ensemble, with a budget no Quick series reaches.
func handoffEnv(t *testing.T) *Env {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a ZooKeeper ensemble")
	}
	var impls []string
	for _, impl := range bench.AllImpls {
		if err := bench.Available(impl); err != nil {
			t.Logf("skipping %s: %v", impl, err)
			continue
		}
		impls = append(impls, impl)
	}
	return &Env{Ensemble: testenv.New(t, testenv.Config{Servers: 1}), Impls: impls, SessionTimeout: 3 * time.Second,
		Budget: 10 * time.Minute, Quick: true, Progress: testLog{t}}
}

// checkFigures checks that figs are the named figures, each with one curve
// per implementation in env's order, every curve either with a point per
// size (X the sizes, Y above zero) and no note, or no point and a note
// saying why (only for the implementations in skipped). It returns the
// figures by name and each figure's points by implementation.
func checkFigures(t *testing.T, env *Env, figs []Figure, names []string, sizes []float64, skipped map[string]string) map[string]map[string][]Point {
	t.Helper()
	if len(figs) != len(names) {
		t.Fatalf("%d figures, want %d (%v)", len(figs), len(names), names)
	}
	out := map[string]map[string][]Point{}
	for i, f := range figs {
		if f.Name != names[i] || f.Title == "" || f.XLabel == "" || f.YLabel == "" || len(f.Notes) == 0 {
			t.Errorf("figure %d: %q %q %q %q, %d notes; want %s with title, labels and notes", i, f.Name, f.Title, f.XLabel, f.YLabel, len(f.Notes), names[i])
		}
		if len(f.Curves) != len(env.Impls) {
			t.Fatalf("%s: %d curves, want %d", f.Name, len(f.Curves), len(env.Impls))
		}
		out[f.Name] = map[string][]Point{}
		for j, c := range f.Curves {
			if c.Impl != env.Impls[j] {
				t.Errorf("%s: curve %d is %s, want %s", f.Name, j, c.Impl, env.Impls[j])
			}
			if want, ok := skipped[c.Impl]; ok {
				if len(c.Points) != 0 || !strings.Contains(c.Note, want) {
					t.Errorf("%s %s: %v, note %q; want no point and a note saying %q", f.Name, c.Impl, c.Points, c.Note, want)
				}
				continue
			}
			if c.Note != "" || len(c.Points) != len(sizes) {
				t.Errorf("%s %s: %v, note %q; want a point at each of %v", f.Name, c.Impl, c.Points, c.Note, sizes)
				continue
			}
			for k, p := range c.Points {
				// A listing's bytes may be none: a participant may learn it
				// leads without listing.
				zeroOK := strings.Contains(f.Name, "list-bytes")
				if p.X != sizes[k] || !(p.Y > 0 || zeroOK && p.Y == 0) {
					t.Errorf("%s %s: point %v, want x %v and y above 0", f.Name, c.Impl, p, sizes[k])
				}
			}
			out[f.Name][c.Impl] = c.Points
		}
		if svg := f.SVG(); !strings.Contains(svg, "<circle") && !strings.Contains(f.Name, "list-bytes") {
			t.Errorf("%s: no marker in the chart", f.Name)
		}
	}
	return out
}

// TestLockSeriesQuick runs the lock series at 2 and 5 contenders. Our lock
// costs 3 requests per cycle alone (create, getChildren, delete) and 4 to 6
// when it waits (a getData on the node ahead, then, when that goes, 1
// getData per node that was ahead at the listing when two or fewer were,
// else 1 more getChildren: recipes.Acquire); its listings grow with the
// contenders queued.
func TestLockSeriesQuick(t *testing.T) {
	env := handoffEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	t0 := time.Now()
	figs, err := runLock(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("lock series took %s", time.Since(t0).Round(time.Millisecond))
	var md strings.Builder
	for _, f := range figs {
		f.Markdown(&md)
	}
	t.Logf("\n%s", md.String())
	pts := checkFigures(t, env, figs, []string{"lock-requests-per-handoff", "lock-list-bytes-per-handoff", "lock-ms-per-handoff"},
		[]float64{2, 5}, nil)
	for _, p := range pts["lock-requests-per-handoff"][bench.ImplZkrecipes] {
		if p.Y < 3 || p.Y > 6 {
			t.Errorf("zkrecipes: %.3g requests per handoff at %v contenders, want 3 to 6", p.Y, p.X)
		}
	}
	for impl, ps := range pts["lock-list-bytes-per-handoff"] {
		if len(ps) == 2 && ps[1].Y <= ps[0].Y {
			t.Errorf("%s: %.4g list bytes per handoff at 5 contenders, not more than the %.4g at 2", impl, ps[1].Y, ps[0].Y)
		}
	}
}

// TestElectSeriesQuick runs the elect series at 2 and 5 participants. Our
// handoff costs the leader's delete and its successor's owner check, which
// is also its term watch (1 getData, recipes.Holding.Check): 2 with 2
// participants, where the successor knows it is next; with more, the
// successor also checks that those ahead of it at its last listing are
// gone (1 getData each when two or fewer were, else 1 getChildren): 2 to
// 4. go-zookeeper has no election.
func TestElectSeriesQuick(t *testing.T) {
	env := handoffEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	t0 := time.Now()
	figs, err := runElect(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("elect series took %s", time.Since(t0).Round(time.Millisecond))
	var md strings.Builder
	for _, f := range figs {
		f.Markdown(&md)
	}
	t.Logf("\n%s", md.String())
	pts := checkFigures(t, env, figs, []string{"elect-ms-to-new-leader", "elect-requests-per-handoff", "elect-list-bytes-per-handoff"},
		[]float64{2, 5}, map[string]string{bench.ImplGoZK: "no election recipe"})
	if ps := pts["elect-requests-per-handoff"][bench.ImplZkrecipes]; len(ps) == 2 && (ps[0].Y != 2 || ps[1].Y < 2 || ps[1].Y > 4) {
		t.Errorf("zkrecipes: %v requests per handoff, want 2 at 2 participants and 2 to 4 at 5", ps)
	}
	if ps := pts["elect-list-bytes-per-handoff"][bench.ImplZkrecipes]; len(ps) == 2 && ps[0].Y != 0 {
		t.Errorf("zkrecipes: %v list bytes per handoff, want none at 2 participants (the successor does not list)", ps)
	}
}
