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

	"github.com/zkrecipes/zkrecipes/lab/testenv"
)

// TestRunEndToEnd runs a tiny zkbench configuration against a real
// 1-server ensemble: every implementation, uncontended and 2 contenders,
// plus one graceful and one session-loss leader handoff for the Go
// implementations. Each implementation must have a row per workload with
// requests per operation counted on the wire (Curator and kazoo are
// skipped, with the reason, only when Java or Python/kazoo are missing).
func TestRunEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a ZooKeeper ensemble")
	}
	e := testenv.New(t, testenv.Config{Servers: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
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
		Impls: impls, Workloads: []string{WUncontended, WContended},
		Iterations: 10, Warmup: 2, Duration: 500 * time.Millisecond, Contenders: []int{2},
		SessionTimeout: 2 * time.Second, Progress: &progress,
	}
	rep, err := Run(ctx, e, cfg)
	if err != nil {
		t.Fatal(err)
	}
	lrep, err := Run(ctx, e, Config{Impls: []string{ImplZkrecipes, ImplGoZK}, Workloads: []string{WLeader},
		ResignRounds: 1, ExpiryRounds: 1, SessionTimeout: time.Second, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("progress:\n%s", progress.String())
	rep.Results = append(rep.Results, lrep.Results...)
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
		}
		if !strings.Contains(table.String(), impl) {
			t.Errorf("the table does not name %s", impl)
		}
	}
	for _, impl := range impls {
		check("uncontended", impl, floorUncontended)
		check("contended-2", impl, floorContended)
	}
	for _, impl := range []string{ImplZkrecipes, ImplGoZK} {
		check("leader-resign", impl, floorResign)
		check("leader-expiry", impl, floorExpiry)
	}
	if r := got[key{"uncontended", ImplGoZK}]; r.Cost.Requests != 3 || r.Cost.Lists != 1 {
		// zk.Lock's cost is fixed (create, getChildren, delete): the
		// counting proxy must see exactly that.
		t.Errorf("go-zookeeper uncontended cost %+v, want 3 requests with 1 listing", r.Cost)
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

	// Every driver, proxy and campaign is gone (the ensemble's own
	// goroutines end with its cleanup, after this check).
	waitFor(t, 30*time.Second, "bench goroutines to end", func() bool { return leaked() == "" })
}

// leaked returns the stacks of goroutines running this package's code,
// other than the test's own.
func leaked() string {
	buf := make([]byte, 4<<20)
	var out []string
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "zkrecipes/bench.") && !strings.Contains(g, "bench.TestRunEndToEnd") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}
