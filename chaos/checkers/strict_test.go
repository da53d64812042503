package checkers

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/zkrecipes/zkrecipes/chaos/faults"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// claim records a claim of item by client from..to (to < 0: open), ended by
// a release or, when lost is set, a loss.
func (b *hb) claim(client, item string, from, to int64, lost bool) *hb {
	b.add(history.Event{Time: from * ms, Client: client, Kind: history.KindAcquired, Key: item, Mode: "claim"})
	if to >= 0 {
		k := history.KindReleased
		if lost {
			k = history.KindLost
		}
		b.add(history.Event{Time: to * ms, Client: client, Kind: k, Key: item, Mode: "claim"})
	}
	return b
}

// readBack records what the audit read back: a site's vote (site != "") or
// the decision of tx; v is 1 commit, 0 abort, -1 absent.
func (b *hb) readBack(tx, site string, v int64) *hb {
	fn := history.FnDecide
	if site != "" {
		fn = history.FnVote
	}
	return b.add(history.Event{Time: 99 * ms, Client: history.Auditor, Kind: history.KindReadBack, Fn: fn, Key: tx, Detail: site, Value: v})
}

// fenced records a fenced write of counter /c by client with token, its
// fenced-cas invoked at call and accepted at ret.
func (b *hb) fenced(client string, token, value, call, ret int64) *hb {
	b.op(client, history.FnFencedCAS, "/c", value-1, value, call, ret, history.KindOK, "/c", value)
	return b.add(history.Event{Time: ret * ms, Client: client, Kind: history.KindFencedOK, Key: "/c", Token: token, Value: value})
}

// hardRegister is a register history no search finishes in a millisecond:
// many clients with concurrent compare-and-sets of unknown outcome.
func hardRegister() history.History {
	b := newHB(100000)
	for c := range 40 {
		for i := range 40 {
			b.cas(fmt.Sprintf("c%d", c), "/r", int64(i), int64(i+1), int64(i*10+c%3), -1, history.KindUnknown)
		}
	}
	for i := range 40 {
		b.cas("z", "/r", int64(i), int64(i+1), 5000+int64(i*2), 5001+int64(i*2), history.KindOK)
	}
	return b.build()
}

// strictCases are histories that the checkers before issue 15 passed and
// that each break an invariant.
func strictCases() []checkerCase {
	return []checkerCase{
		{"double barrier: retried enters are one member", DoubleBarrier(3),
			newHB(100).op("a", history.FnEnter, "/d", 0, 0, 0, 2, history.KindFail, "/d", 0).op("a", history.FnEnter, "/d", 0, 0, 3, 12, history.KindOK, "/d", 0).
				op("b", history.FnEnter, "/d", 0, 0, 5, 12, history.KindOK, "/d", 0).build(), 2, "2 of 3 members"},
		{"double barrier: a loss excuses only from its moment", DoubleBarrier(2),
			newHB(100).op("a", history.FnEnter, "/d", 0, 0, 0, 11, history.KindOK, "/d", 0).op("b", history.FnEnter, "/d", 0, 0, 10, 12, history.KindOK, "/d", 0).
				op("a", history.FnLeave, "/d", 0, 0, 20, 25, history.KindOK, "/d", 0).
				add(history.Event{Time: 40 * ms, Client: "b", Kind: history.KindLost, Key: "/d"}).build(), 1, "before b began to leave"},

		{"fencing: stale holder's write accepted before the new holder wrote", FencedWrites(),
			newHB(100).hold("a", "/l", 1, 0, -1).hold("b", "/l", 2, 30, 50).fenced("a", 1, 1, 55, 60).build(), 1, "token 2"},
		{"fencing: write with the token of no holding", FencedWrites(),
			newHB(100).hold("a", "/l", 1, 0, 10).fenced("b", 7, 1, 20, 21).build(), 1, "no holding"},

		{"queue: taken but never acked", QueueDelivery(),
			newHB(100).op("p", history.FnPut, "x1", 1, 0, 0, 1, history.KindOK, "x1", 0).
				op("c", history.FnTake, "", 0, 0, 4, 5, history.KindOK, "x1", 0).claim("c", "x1", 5, 9, false).build(), 1, "never acked"},
		{"queue: two live claims", QueueDelivery(),
			newHB(100).op("p", history.FnPut, "x1", 1, 0, 0, 1, history.KindOK, "x1", 0).
				op("c1", history.FnTake, "", 0, 0, 4, 5, history.KindOK, "x1", 0).claim("c1", "x1", 5, 20, false).
				op("c2", history.FnTake, "", 0, 0, 8, 9, history.KindOK, "x1", 0).claim("c2", "x1", 9, 12, false).
				op("c1", history.FnAck, "x1", 0, 0, 18, 19, history.KindOK, "x1", 0).build(), 1, "two live claims"},
		{"queue: live claim deleted by another client", QueueDelivery(),
			newHB(100).op("p", history.FnPut, "x1", 1, 0, 0, 1, history.KindOK, "x1", 0).
				op("c1", history.FnTake, "", 0, 0, 4, 5, history.KindOK, "x1", 0).claim("c1", "x1", 5, -1, false).
				add(history.Event{Time: 12 * ms, Client: "c1", Kind: history.KindLost, Key: "x1", Detail: "queue: claim lost: " + recipes.ErrNodeDeleted.Error() + ": claim node /q/taken/x1 deleted"}).
				op("c2", history.FnTake, "", 0, 0, 14, 15, history.KindOK, "x1", 0).claim("c2", "x1", 15, 17, false).
				op("c2", history.FnAck, "x1", 0, 0, 16, 17, history.KindOK, "x1", 0).build(), 1, "deleted by another client while c1 held it"},
		{"queue: the owner's ack deletes its claim before it returns", QueueDelivery(),
			newHB(100).op("p", history.FnPut, "x1", 1, 0, 0, 1, history.KindOK, "x1", 0).
				op("c1", history.FnTake, "", 0, 0, 4, 5, history.KindOK, "x1", 0).claim("c1", "x1", 5, -1, false).
				op("c1", history.FnAck, "x1", 0, 0, 10, 15, history.KindUnknown, "x1", 0).
				add(history.Event{Time: 12 * ms, Client: "c1", Kind: history.KindLost, Key: "x1", Detail: "queue: claim lost: " + recipes.ErrNodeDeleted.Error()}).build(), 0, ""},
		{"queue: a claim lost with its session is delivered again", QueueDelivery(),
			newHB(100).op("p", history.FnPut, "x1", 1, 0, 0, 1, history.KindOK, "x1", 0).
				op("c1", history.FnTake, "", 0, 0, 4, 5, history.KindOK, "x1", 0).claim("c1", "x1", 5, -1, false).
				add(history.Event{Time: 12 * ms, Client: "c1", Kind: history.KindLost, Key: "x1", Detail: recipes.ErrSessionLost.Error() + ": session 0x1"}).
				op("c2", history.FnTake, "", 0, 0, 14, 15, history.KindOK, "x1", 0).claim("c2", "x1", 15, 17, false).
				op("c2", history.FnAck, "x1", 0, 0, 16, 17, history.KindOK, "x1", 0).build(), 0, ""},
		{"queue: item of a dead consumer not delivered again", QueueDelivery(),
			newHB(100).op("p", history.FnPut, "x1", 1, 0, 0, 1, history.KindUnknown, "x1", 0).
				op("c1", history.FnTake, "", 0, 0, 4, 5, history.KindOK, "x1", 0).claim("c1", "x1", 5, 20, true).
				op("c1", history.FnAck, "x1", 0, 0, 21, 22, history.KindFail, "x1", 0).build(), 1, "never acked"},

		{"2pc: unknown vote read back as abort, yet commit", TwoPhaseCommit(),
			newHB(100).op("p1", history.FnVote, "t1", 0, 0, 0, 1, history.KindOK, "t1", 1).op("p2", history.FnVote, "t1", 0, 0, 0, 1, history.KindUnknown, "t1", 0).
				op("co", history.FnDecide, "t1", 0, 0, 2, 3, history.KindOK, "t1", 1).
				op("p1", history.FnLearn, "t1", 0, 0, 4, 5, history.KindOK, "t1", 1).op("p2", history.FnLearn, "t1", 0, 0, 4, 5, history.KindOK, "t1", 1).
				readBack("t1", "", 1).readBack("t1", "p1", 1).readBack("t1", "p2", 0).build(), 1, "p2's vote read back is abort"},
		{"2pc: commit never read back", TwoPhaseCommit(),
			newHB(100).op("p1", history.FnVote, "t1", 0, 0, 0, 1, history.KindOK, "t1", 1).op("co", history.FnDecide, "t1", 0, 0, 2, 3, history.KindOK, "t1", 1).
				op("p1", history.FnLearn, "t1", 0, 0, 4, 5, history.KindOK, "t1", 1).build(), 1, "not read back"},
		{"2pc: decision read back differs", TwoPhaseCommit(),
			newHB(100).op("p1", history.FnVote, "t1", 0, 0, 0, 1, history.KindOK, "t1", 1).op("co", history.FnDecide, "t1", 0, 0, 2, 3, history.KindOK, "t1", 1).
				op("p1", history.FnLearn, "t1", 0, 0, 4, 5, history.KindOK, "t1", 1).
				readBack("t1", "", 0).readBack("t1", "p1", 1).build(), 2, "read back abort"},

		{"nodes: a listing error is not zero nodes", NoNodesLeft(),
			newHB(100).add(history.Event{Time: 1, Client: history.RunnerClient, Kind: history.KindNodesLeft, Value: -1, Detail: "cannot list: zk: connection closed"}).build(), 1, "could not list"},

		{"liveness: one client stalls after the heal", Liveness(20 * time.Millisecond),
			newHB(100).read("a", "/r", 0, 1, 0).read("b", "/r", 0, 1, 0).fault("cut", 10, 50).read("a", "/r", 55, 60, 0).build(), 1, "b made no progress"},
	}
}

// TestStrictCheckers: each history breaks an invariant that the checkers
// let pass before issue 15 (or, with no violation wanted, is its
// legitimate neighbour that a stricter checker must still let pass).
func TestStrictCheckers(t *testing.T) {
	cases := append(strictCases(), checkerCase{"linearizable: a search that times out fails", Linearizable(time.Millisecond), hardRegister(), 1, "timed out"})
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.checker.Run(tt.h)
			if len(r.Violations) != tt.bad {
				t.Fatalf("%s: %d violations, want %d: %+v", r.Checker, len(r.Violations), tt.bad, r.Violations)
			}
			if tt.bad > 0 && !strings.Contains(r.Violations[0].Msg, tt.want) {
				t.Fatalf("violation %q does not say %q", r.Violations[0].Msg, tt.want)
			}
		})
	}
}

func TestCapOps(t *testing.T) {
	op := func(call, ret int64) porcupine.Operation { return porcupine.Operation{Call: call, Return: ret} }
	unknown := int64(math.MaxInt64)
	tests := []struct {
		name string
		ops  []porcupine.Operation
		max  int
		want int
	}{
		{"under the cap: all", []porcupine.Operation{op(0, 1), op(2, 3)}, 5, 2},
		{"cut at the cap when nothing is in flight", []porcupine.Operation{op(0, 1), op(2, 3), op(4, 5), op(6, 7)}, 2, 2},
		{"no cut while an operation is in flight", []porcupine.Operation{op(0, 1), op(2, 10), op(4, 5), op(6, 7), op(11, 12)}, 2, 4},
		{"an unknown operation does not block the cut", []porcupine.Operation{op(0, unknown), op(2, 3), op(4, 5)}, 2, 2},
		{"no quiescent instant: all", []porcupine.Operation{op(0, 5), op(4, 9), op(8, 12)}, 1, 3},
		{"empty", nil, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := len(capOps(tt.ops, tt.max)); got != tt.want {
				t.Fatalf("capOps kept %d operations, want %d", got, tt.want)
			}
		})
	}
}

func TestThroughput(t *testing.T) {
	busy := newHB(1000).read("a", "/r", 0, 1, 0).read("a", "/r", 2, 3, 0).read("b", "/r", 4, 5, 0).fault("cut", 100, 200).build()
	idle := newHB(1000).read("a", "/r", 0, 1, 0).fault("cut", 900, 950).read("a", "/r", 960, 970, 0).build()
	tests := []struct {
		name         string
		h            history.History
		tier         faults.Tier
		bad          int
		inconclusive bool
	}{
		{"busy before the fault", busy, faults.TierFull, 0, false},
		{"idle before the fault: flagged in quick", idle, faults.TierQuick, 0, true},
		{"idle before the fault: fails in full", idle, faults.TierFull, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Throughput(10, tt.tier).Run(tt.h)
			if len(r.Violations) != tt.bad || r.Inconclusive != tt.inconclusive {
				t.Fatalf("violations %+v, inconclusive %v (%s); want %d, %v", r.Violations, r.Inconclusive, r.Note, tt.bad, tt.inconclusive)
			}
			if tt.bad+btoi(tt.inconclusive) > 0 && !strings.Contains(r.Note+fmt.Sprint(r.Violations), "not exercised") {
				t.Fatalf("does not say not exercised: %+v %s", r.Violations, r.Note)
			}
		})
	}
}

// TestPendingAtFault: a paced workload is exercised when its target's
// operation was pending at the first fault's start, and only then.
func TestPendingAtFault(t *testing.T) {
	enter := func(b *hb, client string, call, ret int64, res history.Kind) *hb {
		return b.op(client, history.FnEnter, "/b", 0, 0, call, ret, res, "", 0)
	}
	tests := []struct {
		name         string
		h            history.History
		tier         faults.Tier
		bad          int
		inconclusive bool
	}{
		{"waiting across the fault's start", enter(newHB(9000), "c1", 100, 1500, history.KindOK).fault("cut-short", 1000, 2000).build(), faults.TierFull, 0, false},
		{"failed by the fault", enter(newHB(9000), "c1", 100, 1200, history.KindFail).fault("cut-short", 1000, 2000).build(), faults.TierFull, 0, false},
		{"never returned", enter(newHB(9000), "c1", 100, -1, history.KindUnknown).fault("cut-short", 1000, 2000).build(), faults.TierFull, 0, false},
		{"returned just before the fault: fails in full", enter(newHB(9000), "c1", 100, 999, history.KindOK).fault("cut-short", 1000, 2000).build(), faults.TierFull, 1, false},
		{"invoked just after the fault: flagged in quick", enter(newHB(9000), "c1", 1001, 1500, history.KindOK).fault("cut-short", 1000, 2000).build(), faults.TierQuick, 0, true},
		{"another client waiting", enter(newHB(9000), "c2", 100, 1500, history.KindOK).fault("cut-short", 1000, 2000).build(), faults.TierFull, 1, false},
		{"another operation pending", newHB(9000).op("c1", history.FnLeave, "/b", 0, 0, 100, 1500, history.KindOK, "", 0).fault("cut-short", 1000, 2000).build(), faults.TierFull, 1, false},
		{"no fault", enter(newHB(9000), "c1", 100, 1500, history.KindOK).build(), faults.TierFull, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := PendingAtFault("c1", history.FnEnter, tt.tier).Run(tt.h)
			if len(r.Violations) != tt.bad || r.Inconclusive != tt.inconclusive {
				t.Fatalf("violations %+v, inconclusive %v (%s); want %d, %v", r.Violations, r.Inconclusive, r.Note, tt.bad, tt.inconclusive)
			}
			if tt.bad+btoi(tt.inconclusive) > 0 && !strings.Contains(r.Note+fmt.Sprint(r.Violations), "not exercised") {
				t.Fatalf("does not say not exercised: %+v %s", r.Violations, r.Note)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestCappedResult: a linearizability check over more operations than
// MaxLinearizableOps says it examined only some (Checked of Of), and one
// under the cap says nothing of the sort.
func TestCappedResult(t *testing.T) {
	n := int64(MaxLinearizableOps + 7)
	big, cnt := newHB(3*n+10), newHB(3*n+10)
	for i := int64(0); i < n; i++ {
		big.cas("c1", "/r", i, i+1, 3*i, 3*i+1, history.KindOK)
		cnt.addOp("c1", "/n", 1, 3*i, 3*i+1, history.KindOK, i+1)
	}
	small := newHB(100).cas("c1", "/r", 0, 1, 0, 1, history.KindOK).cas("c1", "/r", 1, 2, 2, 3, history.KindOK).build()
	tests := []struct {
		name        string
		r           Result
		checked, of int
	}{
		{"register over the cap", Linearizable(time.Minute).Run(big.build()), MaxLinearizableOps, int(n)},
		{"counter over the cap", CounterLinearizable(time.Minute).Run(cnt.build()), MaxLinearizableOps, int(n)},
		{"register under the cap", Linearizable(time.Minute).Run(small), 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.r.OK() || tt.r.Checked != tt.checked || tt.r.Of != tt.of || tt.r.Capped() != (tt.of > 0) {
				t.Fatalf("result %+v: want checked %d of %d", tt.r, tt.checked, tt.of)
			}
		})
	}
}

// TestVoid: a voided result keeps its findings as expected ones, names
// the fault and says why in its note.
func TestVoid(t *testing.T) {
	tests := []struct {
		name     string
		r        Result
		expected int
		note     string
	}{
		{"with findings", Result{Checker: "mutual-exclusion", Checked: 4, Violations: []Violation{{Msg: "c1 and c2 hold /l"}}}, 1,
			"1 finding(s) expected under freeze-client, not counted: c1 and c2 hold /l"},
		{"without", Result{Checker: "mutual-exclusion", Checked: 4}, 0, "voided by freeze-client"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.r.Void("freeze-client")
			if !v.Voided || v.VoidedBy != "freeze-client" || v.Expected != tt.expected || len(v.Violations) != 0 || v.Note != tt.note || v.Checked != 4 {
				t.Fatalf("voided: %+v", v)
			}
		})
	}
}

// TestVisual: a linearizability violation carries porcupine's
// visualisation; a pass carries none.
func TestVisual(t *testing.T) {
	lost := newHB(100).cas("a", "/r", 0, 1, 0, 5, history.KindOK).cas("b", "/r", 0, 1, 6, 8, history.KindOK).build()
	twice := newHB(100).addOp("a", "/n", 1, 0, 10, history.KindOK, 2).addOp("b", "/n", 1, 20, 30, history.KindOK, 3).build()
	fine := newHB(100).cas("a", "/r", 0, 1, 0, 5, history.KindOK).build()
	tests := []struct {
		name   string
		r      Result
		visual bool
	}{
		{"register violation", Linearizable(time.Second).Run(lost), true},
		{"counter violation", CounterLinearizable(time.Second).Run(twice), true},
		{"pass", Linearizable(time.Second).Run(fine), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := len(tt.r.Visual) > 0
			if got != tt.visual || got && !strings.Contains(string(tt.r.Visual), "<html") {
				t.Fatalf("visual %d bytes, want one: %v", len(tt.r.Visual), tt.visual)
			}
		})
	}
}
