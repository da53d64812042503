package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/testenv"
)

// TestRunEndToEnd runs a tiny zkbench configuration against a real
// 1-server ensemble: every implementation, uncontended and 2 contenders, a
// counter incremented by 1 and by 2 clients, a multi-lock over 3 paths
// alone and with 2 contenders, plus one graceful and one session-loss
// leader handoff for the Go implementations. Each implementation must have
// a row per workload with requests per operation counted on the wire, or
// say that its library has no such recipe (Curator and kazoo are skipped,
// with the reason, only when Java or Python/kazoo are missing).
func TestRunEndToEnd(t *testing.T) {
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
	cfg := Config{
		Impls: impls, Workloads: []string{WUncontended, WContended, WCounter, WMultiLock},
		Iterations: 10, Warmup: 2, Duration: 500 * time.Millisecond, Contenders: []int{2},
		CounterClients: []int{1, 2}, MultiContenders: []int{2},
		SessionTimeout: 2 * time.Second, Progress: &progress,
	}
	rep, err := Run(ctx, e, cfg)
	if err != nil {
		t.Fatal(err)
	}
	lrep, err := Run(ctx, e, Config{Impls: []string{ImplZkrecipes, ImplGoZK}, Workloads: []string{WLeader},
		ResignRounds: 1, ExpiryRounds: 1, SessionTimeout: 2 * time.Second, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	// The queue, zkrecipes alone: its strict and its spread takes.
	qrep, err := Run(ctx, e, Config{Impls: []string{ImplZkrecipes}, Workloads: []string{WQueue},
		QueueItems: 30, Consumers: []int{1, 2}, SessionTimeout: 2 * time.Second, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("progress:\n%s", progress.String())
	rep.Results = append(rep.Results, lrep.Results...)
	rep.Results = append(rep.Results, qrep.Results...)
	rep.ComputeSpeeds()

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
	check := func(w, impl string, floor Floor) {
		r, ok := got[key{w, impl}]
		switch {
		case !ok:
			t.Errorf("no %s row for %s", w, impl)
		case r.Err != "":
			t.Errorf("%s %s failed: %s", w, impl, r.Err)
		case r.Value <= 0 || r.Ops <= 0:
			t.Errorf("%s %s: no figure: %+v", w, impl, r)
		case r.Floor != floor:
			t.Errorf("%s %s: floor %+v, want %+v", w, impl, r.Floor, floor)
		case strings.Contains(w, "contended") && r.Cost.Requests < 3-floorSlack:
			// No lock is taken and given back in fewer than a create, a
			// listing and a delete.
			t.Errorf("%s %s: %.2f requests/op: not counted?", w, impl, r.Cost.Requests)
		case strings.HasPrefix(w, "leader") && r.Cost.Notifications < 1-floorSlack:
			t.Errorf("%s %s: %.2f notifications/handoff: the next in line was not woken by a watch?", w, impl, r.Cost.Notifications)
		case strings.HasPrefix(w, "counter") && (r.Cost.ByOp["getData"] < 1 || r.Cost.ByOp["setData"] < 1):
			// Every successful increment read the counter and wrote it
			// (the final value was checked by the harness: Err is empty).
			t.Errorf("%s %s: %+v per increment: not a read and a versioned write?", w, impl, r.Cost.ByOp)
		case strings.HasPrefix(w, "multilock") && (r.Cost.Requests < 3*multiPaths || r.Cost.Lists < multiPaths):
			// No path is taken and given back in fewer than a create, a
			// listing and a delete.
			t.Errorf("%s %s: %.2f requests, %.2f lists per cycle: not counted?", w, impl, r.Cost.Requests, r.Cost.Lists)
		case r.Cost.BytesOut <= 0 || r.Cost.BytesIn <= 0:
			t.Errorf("%s %s: %.1f bytes out, %.1f in per op: not counted?", w, impl, r.Cost.BytesOut, r.Cost.BytesIn)
		}
		if !strings.Contains(table.String(), impl) {
			t.Errorf("the table does not name %s", impl)
		}
	}
	unsupported := func(w, impl string) {
		r, ok := got[key{w, impl}]
		if !ok || r.Err != errText(ErrUnsupported) {
			t.Errorf("%s %s: %+v, want a row saying the library has no such recipe", w, impl, r)
		}
	}
	for _, impl := range impls {
		check("uncontended", impl, floorUncontended)
		check("contended-2", impl, floorContended)
		if impl == ImplGoZK {
			unsupported("counter-1", impl)
			unsupported("counter-2", impl)
		} else {
			check("counter-1", impl, floorCounter)
			check("counter-2", impl, floorCounter)
		}
		if impl == ImplGoZK || impl == ImplKazoo {
			unsupported("multilock-uncontended", impl)
			unsupported("multilock-contended-2", impl)
		} else {
			check("multilock-uncontended", impl, floorMultiUncont)
			check("multilock-contended-2", impl, floorMultiCont)
		}
	}
	for _, impl := range []string{ImplZkrecipes, ImplGoZK} {
		check("leader-resign", impl, floorResign)
		check("leader-expiry", impl, floorExpiry)
	}
	for _, w := range []string{"queue-take-1", "queue-take-2", "queue-take-2-spread"} {
		// Every item taken is at least a listing's share and a delete.
		if r, ok := got[key{w, ImplZkrecipes}]; !ok || r.Err != "" || r.Value <= 0 || r.Cost.ByOp["delete"] < 1 {
			t.Errorf("%s zkrecipes: %+v, want a figure with a delete per item", w, r)
		}
	}
	if _, ok := got[key{"queue-take-1-spread", ImplZkrecipes}]; ok {
		t.Errorf("a spread row for one consumer: nothing to spread over")
	}
	if r := got[key{"uncontended", ImplGoZK}]; r.Cost.Requests != 3 || r.Cost.Lists != 1 {
		// zk.Lock's cost is fixed (create, getChildren, delete): the
		// counting proxy must see exactly that.
		t.Errorf("go-zookeeper uncontended cost %+v, want 3 requests with 1 listing", r.Cost)
	}
	if r := got[key{"counter-1", ImplZkrecipes}]; r.Cost.Requests != 2 || r.Cost.ByOp["getData"] != 1 {
		// shared.Long's documented cost: an increment alone is 1 getData
		// and 1 setData.
		t.Errorf("zkrecipes counter-1 cost %+v, want 1 getData and 1 setData", r.Cost)
	}
	if r := got[key{"multilock-uncontended", ImplZkrecipes}]; r.Cost.ByOp["create"] != multiPaths ||
		r.Cost.Lists != multiPaths || r.Cost.ByOp["delete"] != multiPaths {
		// lock.MultiMutex's documented cost: a create and a listing per
		// path to lock, a delete per path to unlock. (Its joint Context
		// also arms each holding's own-node watch in the background: a
		// getData per path that the release may or may not overtake,
		// not checked here.)
		t.Errorf("zkrecipes multilock-uncontended cost %+v, want %d creates, listings and deletes", r.Cost, multiPaths)
	}

	dir := t.TempDir()
	if err := rep.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"results.json", "results.md", "results.svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}

	// A counter whose final value is not the increments reported is a
	// failed workload: a driver that claims one increment more than it did.
	crep, err := Run(ctx, e, Config{Impls: []string{ImplZkrecipes}, Workloads: []string{WCounter},
		Duration: 200 * time.Millisecond, CounterClients: []int{1}, SessionTimeout: 2 * time.Second,
		Factories: map[string]DriverFactory{ImplZkrecipes: overcounting}})
	if err != nil {
		t.Fatal(err)
	}
	if len(crep.Results) != 1 || !strings.Contains(crep.Results[0].Err, "final value") {
		t.Errorf("overcounting driver: %+v, want counter-1 failed on its final value", crep.Results)
	}

	// Every driver, proxy and campaign is gone (the ensemble's own
	// goroutines end with its cleanup, after this check).
	waitFor(t, 30*time.Second, "bench goroutines to end", func() bool { return leaked() == "" })
}

// leaked returns the stacks of goroutines running this package's code,
// other than the tests' own.
func leaked() string {
	buf := make([]byte, 4<<20)
	var out []string
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "zkrecipes/bench.") && !strings.Contains(g, "bench.Test") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}

// overcounter is the zkrecipes driver but for Increments, which reports
// one successful increment more than were made.
type overcounter struct{ Driver }

func overcounting(ctx context.Context, connect string, sessionTimeout time.Duration) (Driver, error) {
	d, err := NewZkrecipes(ctx, connect, sessionTimeout)
	if err != nil {
		return nil, err
	}
	return overcounter{d}, nil
}

func (d overcounter) Increments(ctx context.Context, path string, dur time.Duration, k int) (int, time.Duration, error) {
	n, el, err := d.Driver.Increments(ctx, path, dur, k)
	return n + 1, el, err
}
