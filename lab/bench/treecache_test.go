package bench

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/testenv"
)

// TestTreeCacheEndToEnd runs the tree cache workload against a real
// 1-server ensemble for every implementation: a tree of 111 nodes, its 100
// leaves set for 1 s with 4 sets in flight. Each implementation with a tree
// cache must have both rows, with the final value of every leaf shown (the
// harness fails the level otherwise), no more update events than changes,
// and at least one read and one notification per update event counted on
// the wire (a cache learns of a change only by a notification, and of its
// data only by a read); go-zookeeper must say it has no such recipe. Then a
// cache that never shows one leaf's final value must fail the level.
func TestTreeCacheEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a ZooKeeper ensemble")
	}
	e := testenv.New(t, testenv.Config{Servers: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	impls := []string{ImplZkrecipes, ImplGoZK}
	for _, impl := range []string{ImplCurator, ImplKazoo} {
		if err := Available(impl); err != nil {
			t.Logf("skipping %s: %v", impl, err)
			continue
		}
		impls = append(impls, impl)
	}
	var progress bytes.Buffer
	rep, err := Run(ctx, e, Config{Impls: impls, Workloads: []string{WTreeCache}, Duration: time.Second,
		TreeWriters: 4, SessionTimeout: 2 * time.Second, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("progress:\n%s", progress.String())
	var table strings.Builder
	if err := rep.WriteText(&table); err != nil {
		t.Fatal(err)
	}
	t.Logf("table:\n%s", table.String())

	type key struct{ w, impl string }
	got := map[key]Result{}
	for _, r := range rep.Results {
		got[key{r.Workload, r.Impl}] = r
	}
	for _, impl := range impls {
		chg, okc := got[key{"treecache-changes", impl}]
		ev, oke := got[key{"treecache-events", impl}]
		if !okc || !oke {
			t.Errorf("%s: missing treecache rows: %+v %+v", impl, chg, ev)
			continue
		}
		if impl == ImplGoZK {
			if chg.Err != errText(ErrUnsupported) || ev.Err != errText(ErrUnsupported) {
				t.Errorf("%s: %+v %+v, want rows saying the library has no such recipe", impl, chg, ev)
			}
			continue
		}
		switch {
		case chg.Err != "" || ev.Err != "":
			t.Errorf("%s failed: %s / %s", impl, chg.Err, ev.Err)
			continue
		case chg.Value <= 0 || ev.Value <= 0 || chg.Ops <= 0 || ev.Ops <= 0:
			t.Errorf("%s: no figure: %+v %+v", impl, chg, ev)
		case ev.Ops > chg.Ops:
			t.Errorf("%s: %d update events for %d changes", impl, ev.Ops, chg.Ops)
		case chg.Floor != floorTreeCache || ev.Floor != floorTreeCache:
			t.Errorf("%s: floors %+v %+v, want %+v", impl, chg.Floor, ev.Floor, floorTreeCache)
		case ev.Cost.ByOp["getData"] < 1-floorSlack || ev.Cost.Notifications < 1-floorSlack:
			t.Errorf("%s: %+v per update event: fewer reads or notifications than events: not counted?", impl, ev.Cost)
		}
		// Both rows divide the same counts: their costs are in the
		// ratio of their operations.
		if r := chg.Cost.Requests * float64(chg.Ops) / float64(ev.Ops); math.Abs(r-ev.Cost.Requests) > 1e-6 {
			t.Errorf("%s: %.3f requests per change over %d changes, %.3f per event over %d events: not the same counts",
				impl, chg.Cost.Requests, chg.Ops, ev.Cost.Requests, ev.Ops)
		}
		if !strings.Contains(strings.Join(rep.Notes, "\n"), "treecache "+impl+":") {
			t.Errorf("no note on %s's run: %q", impl, rep.Notes)
		}
	}
	if ev := got[key{"treecache-events", ImplZkrecipes}]; ev.Err == "" &&
		(ev.Cost.Requests != ev.Cost.ByOp["getData"] || ev.Cost.Lists != 0 || !ev.AtFloor()) {
		// cache.TreeCache's documented cost: a data set costs 1
		// getData, found by one notification; nothing else.
		t.Errorf("zkrecipes: %+v per update event, want 1 getData and 1 notification", ev.Cost)
	}

	// A cache that never shows one leaf's final value fails the level.
	brep, err := Run(ctx, e, Config{Impls: []string{ImplZkrecipes}, Workloads: []string{WTreeCache},
		Duration: 200 * time.Millisecond, TreeFanout: 3, TreeCatchUp: time.Second, SessionTimeout: 2 * time.Second,
		Factories: map[string]DriverFactory{ImplZkrecipes: behind}})
	if err != nil {
		t.Fatal(err)
	}
	if len(brep.Results) != 2 {
		t.Fatalf("lagging cache: %+v, want 2 rows", brep.Results)
	}
	for _, r := range brep.Results {
		if !strings.Contains(r.Err, "did not show every leaf's final value") {
			t.Errorf("lagging cache: %s %+v, want failed on a final value not shown", r.Workload, r)
		}
	}

	waitFor(t, 30*time.Second, "bench goroutines to end", func() bool { return leaked() == "" })
}

// lagging is the zkrecipes driver but for AwaitTree, which waits for one
// leaf to show a value one set beyond its last: a cache that never shows
// that leaf's final value, as the harness sees it.
type lagging struct{ Driver }

func behind(ctx context.Context, connect string, sessionTimeout time.Duration) (Driver, error) {
	d, err := NewZkrecipes(ctx, connect, sessionTimeout)
	if err != nil {
		return nil, err
	}
	return lagging{d}, nil
}

func (d lagging) AwaitTree(ctx context.Context, want map[string]string) (TreeEvents, error) {
	shifted := make(map[string]string, len(want))
	first := ""
	for p, v := range want {
		shifted[p] = v
		if first == "" || p < first {
			first = p
		}
	}
	shifted[first] += "0" // "12" -> "120": never written
	return d.Driver.AwaitTree(ctx, shifted)
}
