package chaos

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zkrecipes/zkrecipes/chaos/workloads"
)

// TestUpstreamBugs checks the registry of the upstream bug classes: every
// bug named once with its link, and every variant a mutant case.
func TestUpstreamBugs(t *testing.T) {
	mutants := map[string]bool{}
	for _, mc := range workloads.MutantCases() {
		mutants[mc.Mutant.Name()] = true
	}
	ids := map[string]bool{}
	with := 0
	for _, b := range workloads.UpstreamBugs() {
		if ids[b.ID] || !strings.HasPrefix(b.URL, "https://github.com/") {
			t.Errorf("%+v: duplicate id or no GitHub link", b)
		}
		ids[b.ID] = true
		if b.Mutant != "" {
			with++
			if !mutants[b.Mutant] {
				t.Errorf("%s: %s is no mutant case", b.ID, b.Mutant)
			}
		}
	}
	if len(ids) != 12 || len(workloads.UpstreamCases()) != with {
		t.Errorf("%d bugs, %d cases for %d variants", len(ids), len(workloads.UpstreamCases()), with)
	}
}

func TestUpstreamLine(t *testing.T) {
	v := func(sc string, caught bool) MutantVerdict { return MutantVerdict{Scenario: sc, Caught: caught} }
	without := 0
	for _, b := range workloads.UpstreamBugs() {
		if b.Mutant == "" {
			without++
		}
	}
	tail := ""
	if without > 0 {
		tail = fmt.Sprintf(" (%d more listed in docs/upstream-bugs.md have no variant yet)", without)
	}
	tests := []struct {
		name string
		vs   []MutantVerdict
		want string
	}{
		{"none", nil, ""},
		{"not upstream", []MutantVerdict{v("fence-mutant/freeze-client", true)}, ""},
		{"all caught on every seed", []MutantVerdict{
			v("lock-release-mutant/cut-short", true), v("lock-release-mutant/cut-short", true),
			v("leader-owner-mutant/partition-expire", true),
		}, "upstream bug classes: 2 of 2 caught" + tail},
		{"one seed missed", []MutantVerdict{
			v("lock-release-mutant/cut-short", true), v("rwlock-gone-mutant/partition-expire@waiter", true),
			v("rwlock-gone-mutant/partition-expire@waiter", false),
		}, "upstream bug classes: 1 of 2 caught; missed: etcd #16221 (rwlock-gone-mutant)" + tail},
	}
	for _, tt := range tests {
		if got := UpstreamLine(tt.vs); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	scs := []Scenario{{Name: "lock-try-mutant/cut-short"}}
	got := SelectedVerdicts([]MutantVerdict{v("lock-try-mutant/cut-short", true), v("lock-release-mutant/cut-short", false)}, scs)
	if len(got) != 1 || got[0].Scenario != "lock-try-mutant/cut-short" {
		t.Errorf("SelectedVerdicts = %v", got)
	}
}
