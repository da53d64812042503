package chaos

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
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
		f, err := FaultByName(n)
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
		f, _ := FaultByName(a.Windows[i].Fault)
		ia, ra := pickClient(cs, holding, true, f.Aim, a.Windows[i].Victim)
		ib, rb := pickClient(cs, holding, true, f.Aim, b.Windows[i].Victim)
		if ia != ib || ra != rb || ra != f.Aim {
			t.Fatalf("window %d (%s): targets %d %s and %d %s", i, f.Name, ia, ra, ib, rb)
		}
	}
}

// target records a fault target in a hand-made history.
func (b *hb) target(fault string, at int64, tg Target) *hb {
	tg.Fault = fault
	e := targetEvent(tg)
	e.Time = at * ms
	return b.add(e)
}

func (b *hb) session(client string, at int64, what string) *hb {
	return b.add(Event{Time: at * ms, Client: client, Kind: KindSession, Detail: what})
}

func (b *hb) lost(client, key string, token, at int64) *hb {
	return b.add(Event{Time: at * ms, Client: client, Kind: KindLost, Key: key, Token: token, Detail: "suspended"})
}

func TestExercised(t *testing.T) {
	const grace = time.Second
	holder := Target{Aim: RoleHolder, Client: "c1", ClientRole: RoleHolder}
	tests := []struct {
		name         string
		h            History
		tier         Tier
		bad          int
		inconclusive bool
	}{
		{"target suspended", newHB(9000).fault("partition-expire", 1000, 2000).target("partition-expire", 1001, holder).
			session("c1", 1500, "suspended").build(), TierFull, 0, false},
		{"target's new session after the heal, within the grace", newHB(9000).fault("partition-expire", 1000, 2000).target("partition-expire", 1001, holder).
			session("c1", 2500, "new").build(), TierFull, 0, false},
		{"only another client suspended: full fails", newHB(9000).fault("partition-expire", 1000, 2000).target("partition-expire", 1001, holder).
			session("c2", 1500, "suspended").build(), TierFull, 1, false},
		{"only another client suspended: quick flags", newHB(9000).fault("partition-expire", 1000, 2000).target("partition-expire", 1001, holder).
			session("c2", 1500, "suspended").build(), TierQuick, 0, true},
		{"trace past the grace", newHB(9000).fault("half-open", 1000, 2000).target("half-open", 1001, holder).
			lost("c1", "/l", 1, 3500).build(), TierFull, 1, false},
		{"frozen holder handed over", newHB(9000).hold("c1", "/l", 1, 500, -1).hold("c2", "/l", 2, 1800, 2500).
			fault("freeze-client", 1000, 2000).target("freeze-client", 1001, holder).build(), TierFull, 0, false},
		{"frozen holder that released normally", newHB(9000).hold("c1", "/l", 1, 500, 1200).
			fault("freeze-client", 1000, 2000).target("freeze-client", 1001, holder).build(), TierFull, 1, false},
		{"contention is no trace", newHB(9000).add(Event{Time: 1100 * ms, Client: "c1", Kind: KindInvoke, Op: 1, Fn: FnCAS}).
			add(Event{Time: 1200 * ms, Client: "c1", Kind: KindFail, Op: 1, Fn: FnCAS, Detail: "zk: version conflict"}).
			fault("kill-follower", 1000, 2000).build(), TierFull, 1, false},
		{"a request failed by the fault is a trace", newHB(9000).add(Event{Time: 1100 * ms, Client: "c1", Kind: KindInvoke, Op: 1, Fn: FnRead}).
			add(Event{Time: 1200 * ms, Client: "c1", Kind: KindFail, Op: 1, Fn: FnRead, Detail: "zk: connection closed"}).
			fault("kill-follower", 1000, 2000).build(), TierFull, 0, false},
		{"unknown outcome is a trace", newHB(9000).cas("c2", "/r", 0, 1, 1100, 1200, KindUnknown).fault("kill-follower", 1000, 2000).build(), TierFull, 0, false},
		{"leader change is a trace", newHB(9000).add(Event{Time: 900 * ms, Client: Nemesis, Kind: KindZKLeader, Value: 0}).
			fault("kill-leader", 1000, 2000).add(Event{Time: 2100 * ms, Client: Nemesis, Kind: KindZKLeader, Value: 2}).build(), TierFull, 0, false},
		{"same leader, nothing else", newHB(9000).add(Event{Time: 900 * ms, Client: Nemesis, Kind: KindZKLeader, Value: 1}).
			fault("kill-follower", 1000, 2000).add(Event{Time: 2100 * ms, Client: Nemesis, Kind: KindZKLeader, Value: 1}).build(), TierFull, 1, false},
		{"slow link carried traffic", newHB(9000).read("c1", "/r", 1100, 1900, 0).fault("latency-low", 1000, 2000).build(), TierFull, 0, false},
		{"slow link carried nothing", newHB(9000).read("c1", "/r", 2100, 2200, 0).fault("latency-low", 1000, 2000).build(), TierFull, 1, false},
		{"slow link suspended a client", newHB(9000).read("c1", "/r", 2100, 2200, 0).session("c2", 1800, "suspended").
			fault("latency-near", 1000, 2000).build(), TierFull, 0, false},
		{"a client that moved to another server is a trace", newHB(9000).session("c3", 1010, "reconnected to server 2").
			fault("kill-follower", 1000, 2000).build(), TierFull, 0, false},
		{"an operation invoked under the latency, done just after the heal", newHB(9000).read("c1", "/r", 1900, 2001, 0).fault("latency-near", 1000, 2000).build(), TierFull, 0, false},
		{"an operation invoked after the heal is no trace", newHB(9000).read("c1", "/r", 2001, 2100, 0).fault("latency-near", 1000, 2000).build(), TierFull, 1, false},
		{"not injected: skipped", newHB(9000).add(Event{Time: ms, Client: Nemesis, Kind: KindFaultStart, Key: "kill-leader"}).
			add(Event{Time: 2 * ms, Client: Nemesis, Kind: KindFaultEnd, Key: "kill-leader", Detail: "not injected: boom"}).build(), TierFull, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Exercised(grace, tt.tier).Run(tt.h)
			if len(r.Violations) != tt.bad || r.Inconclusive != tt.inconclusive {
				t.Fatalf("violations %+v, inconclusive %v (%s); want %d, %v", r.Violations, r.Inconclusive, r.Note, tt.bad, tt.inconclusive)
			}
			if tt.bad+btoi(tt.inconclusive) > 0 && !strings.Contains(r.Note+r.Msgs(), "not exercised") {
				t.Fatalf("does not say not exercised: %+v %s", r.Violations, r.Note)
			}
		})
	}
}

// Msgs joins the violations' messages, for tests.
func (r Result) Msgs() string {
	var out []string
	for _, v := range r.Violations {
		out = append(out, v.Msg)
	}
	return strings.Join(out, "; ")
}

func TestLeaseMargin(t *testing.T) {
	tests := []struct {
		name    string
		h       History
		margins []time.Duration
		bad     int
	}{
		{"lost, then another acquires later", newHB(9000).hold("c1", "/l", 1, 0, -1).lost("c1", "/l", 1, 1000).
			hold("c2", "/l", 2, 1300, 2000).build(), []time.Duration{300 * time.Millisecond}, 0},
		{"acquired before the old holder's loss signal", newHB(9000).hold("c1", "/l", 1, 0, -1).hold("c2", "/l", 2, 900, 2000).
			lost("c1", "/l", 1, 1000).build(), []time.Duration{-100 * time.Millisecond}, 1},
		{"acquired at the very instant", newHB(9000).hold("c1", "/l", 1, 0, -1).lost("c1", "/l", 1, 1000).
			hold("c2", "/l", 2, 1000, 2000).build(), []time.Duration{0}, 1},
		{"released holdings have no margin", newHB(9000).hold("c1", "/l", 1, 0, 1000).hold("c2", "/l", 2, 1000, 2000).build(), nil, 0},
		{"the loser acquiring again is no handoff", newHB(9000).hold("c1", "/l", 1, 0, -1).lost("c1", "/l", 1, 1000).
			hold("c1", "/l", 3, 1200, 1500).hold("c2", "/l", 4, 1600, 2000).build(), []time.Duration{600 * time.Millisecond}, 0},
		{"readers overlap a lost reader", newHB(9000).holdMode("c1", "/rw", "read", 1, 0, -1).holdMode("c2", "/rw", "read", 2, 500, 700).
			lost("c1", "/rw", 1, 1000).holdMode("c3", "/rw", "write", 3, 1100, 1200).build(), []time.Duration{100 * time.Millisecond}, 0},
		{"another key is no handoff", newHB(9000).hold("c1", "/a", 1, 0, -1).lost("c1", "/a", 1, 1000).hold("c2", "/b", 2, 500, 600).build(), nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []time.Duration
			for _, m := range LeaseMargins(tt.h) {
				got = append(got, m.Margin)
			}
			if !reflect.DeepEqual(got, tt.margins) {
				t.Fatalf("margins %v, want %v", got, tt.margins)
			}
			r := LeaseMargin().Run(tt.h)
			if len(r.Violations) != tt.bad || r.Checked != len(tt.margins) {
				t.Fatalf("violations %+v, checked %d; want %d, %d", r.Violations, r.Checked, tt.bad, len(tt.margins))
			}
		})
	}
}

func TestMarginStats(t *testing.T) {
	ms := func(ds ...time.Duration) []Margin {
		var out []Margin
		for _, d := range ds {
			out = append(out, Margin{Margin: d})
		}
		return out
	}
	tests := []struct {
		in       []Margin
		n        int
		min, med time.Duration
	}{
		{nil, 0, 0, 0},
		{ms(5), 1, 5, 5},
		{ms(9, 1, 5), 3, 1, 5},
		{ms(4, -2, 8, 6), 4, -2, 6},
	}
	for _, tt := range tests {
		n, lo, med := MarginStats(tt.in)
		if n != tt.n || lo != tt.min || med != tt.med {
			t.Errorf("MarginStats(%v) = %d %v %v, want %d %v %v", tt.in, n, lo, med, tt.n, tt.min, tt.med)
		}
	}
}

// The report shows each fault's target (timeline, summary) and the margins
// (summary table, HTML, summary.json); a not-exercised fault counts.
func TestReportTargetsAndMargins(t *testing.T) {
	tg := Target{Aim: RoleHolder, Client: "c1", ClientRole: RoleHolder, Servers: []ServerTarget{{2, RoleFollower}}}
	h := newHB(9000).hold("c1", "/l", 1, 0, -1).fault("partition-expire", 1000, 2000).target("partition-expire", 1001, tg).
		lost("c1", "/l", 1, 2500).hold("c2", "/l", 2, 2750, 3000).build()
	h.Scenario = "lock/partition-expire"
	r := ScenarioResult{Scenario: h.Scenario, Workload: "lock", Faults: "partition-expire", History: h, Injected: 1, Targets: Targets(h)}
	r.Margins, r.MarginMin, r.MarginMedian = MarginStats(LeaseMargins(h))
	for _, c := range []Checker{LeaseMargin(), Exercised(time.Second, TierQuick)} {
		r.Results = append(r.Results, c.Run(h))
	}
	idle := newHB(9000).fault("kill-follower", 1000, 2000).build()
	idle.Scenario = "register/kill-follower"
	r2 := ScenarioResult{Scenario: idle.Scenario, Workload: "register", Faults: "kill-follower", History: idle, Injected: 1}
	r2.Results = append(r2.Results, Exercised(time.Second, TierQuick).Run(idle))
	s := Summary{Seed: 1, Tier: TierQuick, Started: time.Now(), Scenarios: []ScenarioResult{r, r2}}

	if len(r.Targets) != 1 || r.Targets[0].Client != "c1" || r.Targets[0].Servers[0].Index != 2 || r.Targets[0].At != 1001*ms {
		t.Fatalf("targets: %+v", r.Targets)
	}
	if r.Margins != 1 || r.MarginMin != 250*time.Millisecond {
		t.Fatalf("margins %d min %v", r.Margins, r.MarginMin)
	}
	if s.NotExercised() != 1 || r2.Cell("exercised") != "not exercised" {
		t.Fatalf("not exercised: %d, cell %q", s.NotExercised(), r2.Cell("exercised"))
	}
	var table strings.Builder
	if err := s.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"margin min/median", "250ms/250ms", "client c1 (holder) on server 2 (follower)", "1 not exercised"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	dir := t.TempDir()
	if err := WriteReport(dir, s); err != nil {
		t.Fatal(err)
	}
	html, _ := os.ReadFile(filepath.Join(dir, ReportHTML))
	for _, want := range []string{"partition-expire: client c1 (holder) on server 2 (follower)", "250ms", "margin"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(dir, ReportSummary))
	var back struct {
		Scenarios []struct {
			Targets   []Target      `json:"targets"`
			Margins   int           `json:"margins"`
			MarginMin time.Duration `json:"margin_min"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.Scenarios[0]; len(got.Targets) != 1 || got.Targets[0].ClientRole != RoleHolder || got.Margins != 1 || got.MarginMin != 250*time.Millisecond {
		t.Fatalf("summary.json scenario: %+v", got)
	}
}

func TestHoldingNow(t *testing.T) {
	r := NewRecorder()
	if _, has := r.holdingNow([]string{"c1"}); has {
		t.Fatal("an empty history has holdings")
	}
	c1, c2, c3 := r.Client("c1"), r.Client("c2"), r.Client("c3")
	c1.Acquired("/l", 1, "")
	c1.Released("/l", 1)
	c2.Acquired("/l", 2, "")
	c1.Invoke(FnRead, "/r", 0).OK(0)
	c3.Acquired("/l", 3, "")
	c3.Lost("/l", 3, "expired")
	holding, has := r.holdingNow([]string{"c1", "c2", "c3", "c4"})
	if !has || holding["c1"] || !holding["c2"] || holding["c3"] || holding["c4"] {
		t.Fatalf("holding %v, has %v; want only c2", holding, has)
	}
}

// The runner's sampler records a client's new session id (an expiry it
// went through), for clients in worker processes too (no connection here).
func TestSampleSessions(t *testing.T) {
	env := &Env{Rec: NewRecorder()}
	c := &Client{Name: "p1", Log: env.Rec.Client("p1")}
	env.clients = append(env.clients, c)
	c.SetSession(1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); sampleSessions(ctx, env) }()
	defer func() { cancel(); <-done }()
	found := func() (Event, bool) {
		for _, e := range env.Rec.History().Events {
			if e.Kind == KindSession && e.Client == "p1" && e.Detail == "new" {
				return e, true
			}
		}
		return Event{}, false
	}
	deadline := time.Now().Add(10 * time.Second)
	for id := int64(2); ; id++ {
		if _, ok := found(); ok || time.Now().After(deadline) {
			break
		}
		c.SetSession(id) // until the sampler saw one id, then another
		select {
		case <-time.After(30 * time.Millisecond):
		case <-done:
		}
	}
	e, ok := found()
	if !ok || e.Value < 2 {
		t.Fatalf("no new session recorded: %+v", env.Rec.History().Events)
	}
	n := env.Rec.Len()
	for _, e := range env.Rec.History().Events {
		if e.Detail != "new" {
			t.Fatalf("a client without a connection recorded %+v (of %d)", e, n)
		}
	}
}
