package faults

import (
	"reflect"
	"testing"
	"time"
)

func TestPickClient(t *testing.T) {
	cs := []string{"c1", "c2", "c3", "c4"}
	tests := []struct {
		name     string
		holding  []string
		has      bool
		aim      string
		victim   int
		want     int
		wantRole string
	}{
		{"holder found after the victim", []string{"c3"}, true, RoleHolder, 0, 2, RoleHolder},
		{"holder is the victim", []string{"c2", "c4"}, true, RoleHolder, 1, 1, RoleHolder},
		{"holder search wraps", []string{"c1"}, true, RoleHolder, 3, 0, RoleHolder},
		{"waiter skips the holder", []string{"c2"}, true, RoleWaiter, 1, 2, RoleWaiter},
		{"waiter is the victim", []string{"c2"}, true, RoleWaiter, 4, 0, RoleWaiter},
		{"nobody holds: a client", nil, true, RoleHolder, 2, 2, RoleClient},
		{"everybody holds: no waiter", cs, true, RoleWaiter, 1, 1, RoleClient},
		{"no holdings in the workload", nil, false, RoleHolder, 5, 1, RoleClient},
		{"negative draw", []string{"c4"}, true, RoleHolder, -1, 3, RoleHolder},
		{"no aim", []string{"c1"}, true, "", 2, 2, RoleClient},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			holding := map[string]bool{}
			for _, c := range tt.holding {
				holding[c] = true
			}
			got, role := pickClient(cs, holding, tt.has, tt.aim, tt.victim)
			if got != tt.want || role != tt.wantRole {
				t.Fatalf("pickClient = %d %s, want %d %s", got, role, tt.want, tt.wantRole)
			}
		})
	}
	if i, _ := pickClient(nil, nil, false, RoleHolder, 3); i != -1 {
		t.Fatalf("no clients: %d, want -1", i)
	}
}

func TestPins(t *testing.T) {
	tests := []struct {
		name         string
		n, leader, d int
		want         []int
	}{
		{"a follower by the draw, then the leader", 3, 0, 0, []int{1, 0}},
		{"the other follower", 3, 0, 1, []int{2, 0}},
		{"draw wraps", 3, 1, 5, []int{2, 1}},
		{"negative draw", 3, 2, -1, []int{1, 2}},
		{"five servers", 5, 4, 7, []int{3, 4}},
		{"no leader", 3, -1, 0, nil},
		{"leader out of range", 3, 3, 0, nil},
		{"standalone: no follower", 1, 0, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Pins(tt.n, tt.leader, tt.d); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Pins(%d, %d, %d) = %v, want %v", tt.n, tt.leader, tt.d, got, tt.want)
			}
		})
	}
}

func TestServerFits(t *testing.T) {
	tests := []struct {
		i, leader int
		aim       string
		want      bool
	}{
		{-1, 0, "", false},
		{-1, 0, RoleFollower, false},
		{0, 0, RoleFollower, false},
		{1, 0, RoleFollower, true},
		{0, 0, aimMinority, false},
		{2, 0, aimMinority, true},
		{0, 0, "", true},
		{0, 0, aimMajority, true},
		{0, 0, RoleLeader, true},
		{1, -1, RoleFollower, true},
	}
	for _, tt := range tests {
		if got := serverFits(tt.i, tt.leader, tt.aim); got != tt.want {
			t.Errorf("serverFits(%d, %d, %q) = %v, want %v", tt.i, tt.leader, tt.aim, got, tt.want)
		}
	}
}

func TestPickServers(t *testing.T) {
	tests := []struct {
		name              string
		n, leader, client int
		aim               string
		draw              int
		want              []int
	}{
		{"leader", 3, 1, 2, RoleLeader, 7, []int{1}},
		{"leader unknown: drawn", 3, -1, 2, RoleLeader, 4, []int{1}},
		{"follower: the client's server", 3, 0, 2, RoleFollower, 0, []int{2}},
		{"follower: the client is on the leader, drawn", 3, 0, 0, RoleFollower, 1, []int{2}},
		{"follower: client unknown, drawn", 3, 2, -1, RoleFollower, 0, []int{0}},
		{"any: the client's server, even the leader", 3, 1, 1, "", 5, []int{1}},
		{"any: client unknown, drawn", 3, 1, -1, "", 5, []int{2}},
		{"minority of 3: the client's follower", 3, 0, 1, aimMinority, 0, []int{1}},
		{"minority of 3: not the leader", 3, 0, 0, aimMinority, 0, []int{1}},
		{"minority of 5: two followers", 5, 4, 2, aimMinority, 0, []int{2, 0}},
		{"majority of 3: the client's first", 3, 0, 2, aimMajority, 0, []int{2, 0}},
		{"majority of 5", 5, 0, -1, aimMajority, 3, []int{3, 4, 0}},
		{"single server", 1, 0, 0, RoleFollower, 9, []int{0}},
		{"no servers", 0, -1, -1, "", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pickServers(tt.n, tt.leader, tt.client, tt.aim, tt.draw)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("pickServers(%d, %d, %d, %q, %d) = %v, want %v", tt.n, tt.leader, tt.client, tt.aim, tt.draw, got, tt.want)
			}
			seen := map[int]bool{}
			for _, i := range got {
				if i < 0 || i >= tt.n || seen[i] {
					t.Fatalf("server %d out of range or repeated in %v", i, got)
				}
				seen[i] = true
			}
		})
	}
}

func FuzzPickServers(f *testing.F) {
	f.Add(3, 0, 1, 2, 7)
	f.Add(5, -1, -1, 3, -4)
	aims := []string{RoleLeader, RoleFollower, "", aimMinority, aimMajority}
	f.Fuzz(func(t *testing.T, n, leader, client, aim, draw int) {
		n = n % 9
		a := aims[((aim%len(aims))+len(aims))%len(aims)]
		got := pickServers(n, leader, client, a, draw)
		if n > 0 && len(got) == 0 {
			t.Fatalf("no server for n=%d", n)
		}
		seen := map[int]bool{}
		for _, i := range got {
			if i < 0 || i >= n || seen[i] {
				t.Fatalf("pickServers(%d, %d, %d, %q, %d) = %v", n, leader, client, a, draw, got)
			}
			seen[i] = true
		}
	})
}

func TestTargetString(t *testing.T) {
	tests := []struct {
		t    Target
		want string
	}{
		{Target{Client: "c2", ClientRole: RoleHolder, Servers: []ServerTarget{{1, RoleFollower}}}, "client c2 (holder) on server 1 (follower)"},
		{Target{AllClients: true}, "every client"},
		{Target{Servers: []ServerTarget{{0, RoleLeader}, {2, RoleFollower}}}, "servers 0 (leader), 2 (follower)"},
		{Target{Client: "p1", ClientRole: RoleWaiter}, "client p1 (waiter)"},
		{Target{}, "nothing"},
	}
	for _, tt := range tests {
		if got := tt.t.String(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.t, got, tt.want)
		}
	}
}

// The same seed and scenario name replay the same windows, and so the same
// role of target (the aim is the fault's).
func TestScheduleReplaysTargets(t *testing.T) {
	var faults []Fault
	for _, n := range []string{"partition-expire", "partition-expire@waiter", "kill-follower", "overlap"} {
		f, err := ByName(n)
		if err != nil {
			t.Fatal(err)
		}
		faults = append(faults, f)
	}
	a, _ := NewSchedule(99, "lock/mixed", faults, TierFull, time.Minute, time.Second)
	b, _ := NewSchedule(99, "lock/mixed", faults, TierFull, time.Minute, time.Second)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed and scenario, different windows")
	}
	cs := []string{"c1", "c2", "c3"}
	holding := map[string]bool{"c2": true}
	for i := range a.Windows {
		f, _ := ByName(a.Windows[i].Fault)
		ia, ra := pickClient(cs, holding, true, f.Aim, a.Windows[i].Victim)
		ib, rb := pickClient(cs, holding, true, f.Aim, b.Windows[i].Victim)
		if ia != ib || ra != rb || ra != f.Aim {
			t.Fatalf("window %d (%s): targets %d %s and %d %s", i, f.Name, ia, ra, ib, rb)
		}
	}
}
