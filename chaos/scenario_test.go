package chaos

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/zkrecipes/zkrecipes/chaos/faults"
	"github.com/zkrecipes/zkrecipes/chaos/workloads"
)

func scenarioNames(scs []Scenario) []string {
	var out []string
	for _, s := range scs {
		out = append(out, s.Name)
	}
	return out
}

func TestMatrix(t *testing.T) {
	quick := Matrix(faults.TierQuick, &workloads.Register{}, &workloads.LockProc{})
	want := 0
	for _, f := range faults.Catalogue() {
		if (f.InQuick("register") && !f.NeedsProcesses && f.Aim != faults.RoleWaiter) || (f.InQuick("lock-proc") && (f.NeedsProcesses || f.Place != "")) {
			want++
		}
	}
	if got := len(quick); got != want {
		t.Fatalf("quick matrix of register and lock-proc has %d scenarios, want %d: %v", got, want, scenarioNames(quick))
	}
	for _, s := range quick {
		if (s.Workload.Name() == "lock-proc") != (s.Faults[0].NeedsProcesses) && s.Faults[0].Place == "" {
			t.Errorf("%s: process faults must go to process workloads only", s.Name)
		}
	}
	full := Matrix(faults.TierFull, &workloads.Register{})
	if last := full[len(full)-1]; last.Name != "register/slow-close" {
		t.Fatalf("full matrix is not sorted: ends with %s", last.Name)
	}
	mixed := false
	inProc := 0
	for _, f := range faults.Catalogue() {
		if !f.NeedsProcesses && f.Aim != faults.RoleWaiter && f.Place == "" {
			inProc++
		}
	}
	for _, s := range full {
		if s.Name == "register/mixed" {
			mixed = len(s.Faults) == inProc
		}
		if strings.HasSuffix(s.Name, "@waiter") {
			t.Errorf("%s: register has no holdings, so no waiter", s.Name)
		}
	}
	if !mixed {
		t.Error("full tier has no mixed scenario over every in-process fault")
	}
}

// TestPlacedFaultsInQuickTier: every workload with holdings takes the
// placed isolations (the holder's session on a follower, on the leader) in
// the quick tier, whether its clients run in-process or in worker
// processes; no other workload does, and no mixed scenario draws them.
func TestPlacedFaultsInQuickTier(t *testing.T) {
	quick := map[string]bool{}
	for _, sc := range Matrix(faults.TierQuick, workloads.All()...) {
		quick[sc.Name] = true
	}
	for _, w := range workloads.All() {
		for _, f := range []string{"isolate-holder-follower", "isolate-holder-leader"} {
			if got := quick[w.Name()+"/"+f]; got != hasHolders(w) {
				t.Errorf("%s/%s in the quick tier: %v, want %v (holdings)", w.Name(), f, got, hasHolders(w))
			}
		}
	}
	for _, sc := range Matrix(faults.TierFull, workloads.All()...) {
		if len(sc.Faults) < 2 {
			continue
		}
		for _, f := range sc.Faults {
			if f.Place != "" {
				t.Errorf("%s draws the placed fault %s", sc.Name, f.Name)
			}
		}
	}
}

func TestSelect(t *testing.T) {
	all := Matrix(faults.TierQuick, &workloads.Register{}, &workloads.Lock{})
	tests := []struct {
		filter string
		want   []string
		err    error
	}{
		{"register/kill-leader", []string{"register/kill-leader"}, nil},
		{"*/kill-leader", []string{"lock/kill-leader", "register/kill-leader"}, nil},
		{"lock/kill-*, register/cut-short", []string{"lock/kill-follower", "lock/kill-leader", "register/cut-short"}, nil},
		{"nothing/*", nil, ErrNoScenarios},
		{"[", nil, ErrConfig},
	}
	for _, tt := range tests {
		got, err := Select(all, tt.filter)
		if !errors.Is(err, tt.err) {
			t.Errorf("Select(%q): err %v, want %v", tt.filter, err, tt.err)
			continue
		}
		if tt.err == nil && !reflect.DeepEqual(scenarioNames(got), tt.want) {
			t.Errorf("Select(%q) = %v, want %v", tt.filter, scenarioNames(got), tt.want)
		}
	}
	if got, _ := Select(all, ""); len(got) != len(all) {
		t.Errorf("empty filter kept %d of %d", len(got), len(all))
	}
	nlock := 0
	for _, s := range all {
		if strings.HasPrefix(s.Name, "lock/") {
			nlock++
		}
	}
	if got, _ := Select(all, "lock"); len(got) != nlock {
		t.Errorf("prefix filter kept %d, want %d", len(got), nlock)
	}
	if got, _ := Select(all, "lock/partition-expire*"); !reflect.DeepEqual(scenarioNames(got), []string{"lock/partition-expire", "lock/partition-expire@waiter"}) {
		t.Errorf("lock/partition-expire* kept %v", scenarioNames(got))
	}
}

func TestConfigDefaults(t *testing.T) {
	c, err := Config{}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.Tier != faults.TierQuick || c.Seed == 0 || c.Clients != 4 || c.Duration != 4*c.SessionTimeout {
		t.Errorf("defaults: %+v", c)
	}
	for _, bad := range []Config{{Tier: "x"}, {Clients: -1}, {SessionTimeout: 1}, {Duration: -1}} {
		if _, err := bad.WithDefaults(); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: err %v, want ErrConfig", bad, err)
		}
	}
}

// ShardEnv's value: i/n, and the shares cover every scenario once.
func TestShard(t *testing.T) {
	tests := []struct {
		v       string
		i, n    int
		wantErr bool
	}{
		{"", 1, 1, false}, {"1/2", 1, 2, false}, {"2/2", 2, 2, false}, {"3/3", 3, 3, false},
		{"0/2", 0, 0, true}, {"3/2", 0, 0, true}, {"1/0", 0, 0, true}, {"2", 0, 0, true}, {"a/b", 0, 0, true}, {"-1/2", 0, 0, true},
	}
	for _, tt := range tests {
		i, n, err := shard(tt.v)
		if (err != nil) != tt.wantErr || i != tt.i || n != tt.n {
			t.Errorf("shard(%q) = %d, %d, %v; want %d, %d, error %v", tt.v, i, n, err, tt.i, tt.n, tt.wantErr)
		}
	}
	scs := quickScenarios()
	for _, n := range []int{1, 2, 3} {
		seen := map[string]int{}
		for i := 1; i <= n; i++ {
			part := sharded(scs, i, n)
			if len(part) < len(scs)/n {
				t.Errorf("shard %d/%d: %d of %d scenarios", i, n, len(part), len(scs))
			}
			for _, sc := range part {
				seen[sc.Name]++
			}
		}
		for _, sc := range scs {
			if seen[sc.Name] != 1 {
				t.Errorf("n=%d: %s played %d times", n, sc.Name, seen[sc.Name])
			}
		}
	}
}
