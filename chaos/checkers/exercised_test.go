package checkers

import (
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/faults"
	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// target records a fault target in a hand-made history.
func (b *hb) target(fault string, at int64, tg faults.Target) *hb {
	tg.Fault = fault
	e := faults.TargetEvent(tg)
	e.Time = at * ms
	return b.add(e)
}

func (b *hb) session(client string, at int64, what string) *hb {
	return b.add(history.Event{Time: at * ms, Client: client, Kind: history.KindSession, Detail: what})
}

func (b *hb) lost(client, key string, token, at int64) *hb {
	return b.add(history.Event{Time: at * ms, Client: client, Kind: history.KindLost, Key: key, Token: token, Detail: "suspended"})
}

// aim records, at 'at' ms, that c1's workload aims a step at fault's
// windows ("": every fault's); aimHit that it did the step.
func (b *hb) aim(fault string, at int64) *hb {
	return b.add(history.Event{Time: at * ms, Client: "c1", Kind: history.KindAim, Key: fault, Detail: "recreate while c1 is cut off"})
}

func (b *hb) aimHit(at int64) *hb {
	return b.add(history.Event{Time: at * ms, Client: "c1", Kind: history.KindAimHit, Detail: "recreated", Value: 1})
}

func TestExercised(t *testing.T) {
	const grace = time.Second
	holder := faults.Target{Aim: faults.RoleHolder, Client: "c1", ClientRole: faults.RoleHolder}
	tests := []struct {
		name         string
		h            history.History
		tier         faults.Tier
		bad          int
		inconclusive bool
	}{
		{"target suspended", newHB(9000).fault("partition-expire", 1000, 2000).target("partition-expire", 1001, holder).
			session("c1", 1500, "suspended").build(), faults.TierFull, 0, false},
		{"target's new session after the heal, within the grace", newHB(9000).fault("partition-expire", 1000, 2000).target("partition-expire", 1001, holder).
			session("c1", 2500, "new").build(), faults.TierFull, 0, false},
		{"only another client suspended: full fails", newHB(9000).fault("partition-expire", 1000, 2000).target("partition-expire", 1001, holder).
			session("c2", 1500, "suspended").build(), faults.TierFull, 1, false},
		{"only another client suspended: quick flags", newHB(9000).fault("partition-expire", 1000, 2000).target("partition-expire", 1001, holder).
			session("c2", 1500, "suspended").build(), faults.TierQuick, 0, true},
		{"trace past the grace", newHB(9000).fault("half-open", 1000, 2000).target("half-open", 1001, holder).
			lost("c1", "/l", 1, 3500).build(), faults.TierFull, 1, false},
		{"frozen holder handed over", newHB(9000).hold("c1", "/l", 1, 500, -1).hold("c2", "/l", 2, 1800, 2500).
			fault("freeze-client", 1000, 2000).target("freeze-client", 1001, holder).build(), faults.TierFull, 0, false},
		{"frozen holder that released normally", newHB(9000).hold("c1", "/l", 1, 500, 1200).
			fault("freeze-client", 1000, 2000).target("freeze-client", 1001, holder).build(), faults.TierFull, 1, false},
		{"contention is no trace", newHB(9000).add(history.Event{Time: 1100 * ms, Client: "c1", Kind: history.KindInvoke, Op: 1, Fn: history.FnCAS}).
			add(history.Event{Time: 1200 * ms, Client: "c1", Kind: history.KindFail, Op: 1, Fn: history.FnCAS, Detail: "zk: version conflict"}).
			fault("kill-follower", 1000, 2000).build(), faults.TierFull, 1, false},
		{"a request failed by the fault is a trace", newHB(9000).add(history.Event{Time: 1100 * ms, Client: "c1", Kind: history.KindInvoke, Op: 1, Fn: history.FnRead}).
			add(history.Event{Time: 1200 * ms, Client: "c1", Kind: history.KindFail, Op: 1, Fn: history.FnRead, Detail: "zk: connection closed"}).
			fault("kill-follower", 1000, 2000).build(), faults.TierFull, 0, false},
		{"unknown outcome is a trace", newHB(9000).cas("c2", "/r", 0, 1, 1100, 1200, history.KindUnknown).fault("kill-follower", 1000, 2000).build(), faults.TierFull, 0, false},
		{"leader change is a trace", newHB(9000).add(history.Event{Time: 900 * ms, Client: history.Nemesis, Kind: history.KindZKLeader, Value: 0}).
			fault("kill-leader", 1000, 2000).add(history.Event{Time: 2100 * ms, Client: history.Nemesis, Kind: history.KindZKLeader, Value: 2}).build(), faults.TierFull, 0, false},
		{"same leader, nothing else", newHB(9000).add(history.Event{Time: 900 * ms, Client: history.Nemesis, Kind: history.KindZKLeader, Value: 1}).
			fault("kill-follower", 1000, 2000).add(history.Event{Time: 2100 * ms, Client: history.Nemesis, Kind: history.KindZKLeader, Value: 1}).build(), faults.TierFull, 1, false},
		{"slow link carried traffic", newHB(9000).read("c1", "/r", 1100, 1900, 0).fault("latency-low", 1000, 2000).build(), faults.TierFull, 0, false},
		{"slow link carried nothing", newHB(9000).read("c1", "/r", 2100, 2200, 0).fault("latency-low", 1000, 2000).build(), faults.TierFull, 1, false},
		{"slow link suspended a client", newHB(9000).read("c1", "/r", 2100, 2200, 0).session("c2", 1800, "suspended").
			fault("latency-near", 1000, 2000).build(), faults.TierFull, 0, false},
		{"a client that moved to another server is a trace", newHB(9000).session("c3", 1010, "reconnected to server 2").
			fault("kill-follower", 1000, 2000).build(), faults.TierFull, 0, false},
		{"an operation invoked under the latency, done just after the heal", newHB(9000).read("c1", "/r", 1900, 2001, 0).fault("latency-near", 1000, 2000).build(), faults.TierFull, 0, false},
		{"an operation invoked after the heal is no trace", newHB(9000).read("c1", "/r", 2001, 2100, 0).fault("latency-near", 1000, 2000).build(), faults.TierFull, 1, false},
		{"aimed step inside the cut", newHB(9000).aim("cut-short", 100).session("c1", 1010, "suspended").aimHit(1100).fault("cut-short", 1000, 2000).build(), faults.TierFull, 0, false},
		{"aimed step after the heal: full fails", newHB(9000).aim("cut-short", 100).session("c1", 1010, "suspended").aimHit(2100).fault("cut-short", 1000, 2000).build(), faults.TierFull, 1, false},
		{"aimed step missed: quick flags", newHB(9000).aim("cut-short", 100).session("c1", 1010, "suspended").fault("cut-short", 1000, 2000).build(), faults.TierQuick, 0, true},
		{"an aim at every fault: missed", newHB(9000).aim("", 100).session("c1", 1010, "suspended").fault("cut-short", 1000, 2000).build(), faults.TierFull, 1, false},
		{"aimed at another fault: the mild fault's trace suffices", newHB(9000).aim("cut-short", 100).read("c1", "/r", 1100, 1200, 0).fault("latency-low", 1000, 2000).build(), faults.TierFull, 0, false},
		{"aimed at one of two faults: its window missed", newHB(9000).aim("cut-short", 100).read("c1", "/r", 1100, 1200, 0).session("c1", 3010, "suspended").
			fault("latency-low", 1000, 2000).fault("cut-short", 3000, 4000).build(), faults.TierFull, 1, false},
		{"no aim: the fault's trace suffices", newHB(9000).session("c1", 1010, "suspended").fault("cut-short", 1000, 2000).build(), faults.TierFull, 0, false},
		{"not injected: skipped", newHB(9000).add(history.Event{Time: ms, Client: history.Nemesis, Kind: history.KindFaultStart, Key: "kill-leader"}).
			add(history.Event{Time: 2 * ms, Client: history.Nemesis, Kind: history.KindFaultEnd, Key: "kill-leader", Detail: "not injected: boom"}).build(), faults.TierFull, 0, false},
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

// TestExercisedQuotesServerModes: a cut that left no trace names what the
// cut servers answered at the heal, and a window without such events says
// nothing of them.
func TestExercisedQuotesServerModes(t *testing.T) {
	mode := func(at, server int64, m string) history.Event {
		return history.Event{Time: at * ms, Client: history.Nemesis, Kind: history.KindServerMode, Value: server, Detail: m}
	}
	tests := []struct {
		name string
		h    history.History
		want string
	}{
		{"still following", newHB(9000).fault("partition-minority", 1000, 2000).add(mode(1990, 0, "follower")).build(), "(at the heal: server 0 follower)"},
		{"two servers", newHB(9000).fault("partition-majority", 1000, 2000).add(mode(1990, 0, "not serving")).add(mode(1991, 2, "leader")).build(),
			"(at the heal: server 0 not serving, server 2 leader)"},
		{"a mode outside the window is not quoted", newHB(9000).add(mode(500, 1, "follower")).fault("partition-minority", 1000, 2000).build(), "left no disruption trace;"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Exercised(time.Second, faults.TierFull).Run(tt.h)
			if got := r.Msgs() + ";"; !strings.Contains(got, tt.want) {
				t.Fatalf("message %q does not contain %q", got, tt.want)
			}
		})
	}
}
