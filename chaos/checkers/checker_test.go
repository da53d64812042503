package checkers

import (
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/history"
)

type checkerCase struct {
	name    string
	checker Checker
	h       history.History
	bad     int    // violations expected
	want    string // substring of the first violation
}

func checkerCases() []checkerCase {
	return append([]checkerCase{
		// mutual exclusion
		{"mutex: sequential holders", MutualExclusion(1),
			newHB(100).hold("a", "/l", 1, 0, 10).hold("b", "/l", 2, 10, 20).hold("a", "/l", 3, 25, -1).build(), 0, ""},
		{"mutex: overlap", MutualExclusion(1),
			newHB(100).hold("a", "/l", 1, 0, 10).hold("b", "/l", 2, 5, 20).build(), 1, "2 holders of /l"},
		{"mutex: open holding overlaps a later one", MutualExclusion(1),
			newHB(100).hold("a", "/l", 1, 0, -1).hold("b", "/l", 2, 50, 60).build(), 1, "2 holders"},
		{"mutex: lost ends a holding", MutualExclusion(1),
			newHB(100).hold("a", "/l", 1, 0, -1).add(history.Event{Time: 30 * ms, Client: "a", Kind: history.KindLost, Key: "/l"}).hold("b", "/l", 2, 40, 60).build(), 0, ""},
		{"mutex: different keys may overlap", MutualExclusion(1),
			newHB(100).hold("a", "/l1", 1, 0, 50).hold("b", "/l2", 2, 10, 60).build(), 0, ""},
		{"mutex: token went back", MutualExclusion(1),
			newHB(100).hold("a", "/l", 5, 0, 10).hold("b", "/l", 3, 20, 30).build(), 1, "did not grow"},
		{"semaphore-2: two overlap", MutualExclusion(2),
			newHB(100).hold("a", "/s", 1, 0, 50).hold("b", "/s", 2, 10, 60).hold("c", "/s", 3, 55, 70).build(), 0, ""},
		{"semaphore-2: three overlap", MutualExclusion(2),
			newHB(100).hold("a", "/s", 1, 0, 50).hold("b", "/s", 2, 10, 60).hold("c", "/s", 3, 40, 70).build(), 1, "3 holders"},
		{"leader: one at a time", SingleLeader(),
			newHB(100).hold("a", "/e", 1, 0, 40).hold("b", "/e", 2, 40, 90).build(), 0, ""},
		{"leader: two leaders", SingleLeader(),
			newHB(100).hold("a", "/e", 1, 0, 41).hold("b", "/e", 2, 40, 90).build(), 1, "2 holders"},
		{"rwlock: readers share", WriterExclusive(),
			newHB(100).holdMode("a", "/rw", "read", 1, 0, 50).holdMode("b", "/rw", "read", 2, 10, 60).holdMode("c", "/rw", "write", 3, 60, 70).build(), 0, ""},
		{"rwlock: writer overlaps reader", WriterExclusive(),
			newHB(100).holdMode("a", "/rw", "read", 1, 0, 50).holdMode("c", "/rw", "write", 3, 40, 70).build(), 1, "write of /rw"},

		// fencing
		{"fencing: in order", FencedWrites(),
			newHB(100).hold("a", "/l", 1, 0, 10).fenced("a", 1, 1, 1, 2).hold("b", "/l", 4, 10, 30).fenced("b", 4, 2, 12, 13).
				add(history.Event{Time: 40 * ms, Client: "a", Kind: history.KindFencedRejected, Key: "/c", Token: 1}).build(), 0, ""},
		{"fencing: stale write accepted", FencedWrites(),
			newHB(100).hold("a", "/l", 1, 0, -1).fenced("a", 1, 1, 1, 2).hold("b", "/l", 4, 10, 30).fenced("b", 4, 2, 12, 13).
				fenced("a", 1, 3, 40, 41).build(), 2, "stale write accepted"},
		{"fencing: lost update", FencedWrites(),
			newHB(100).hold("a", "/l", 1, 0, 10).fenced("a", 1, 1, 1, 2).hold("b", "/l", 4, 10, 30).fenced("b", 4, 1, 12, 13).build(), 1, "lost update"},

		// register linearizability
		{"register: sequential cas and reads", Linearizable(5 * time.Second),
			newHB(100).cas("a", "/r", 0, 1, 0, 5, history.KindOK).read("b", "/r", 6, 8, 1).cas("b", "/r", 0, 1, 9, 10, history.KindFail).cas("b", "/r", 1, 2, 11, 12, history.KindOK).build(), 0, ""},
		{"register: concurrent cas, either order", Linearizable(5 * time.Second),
			newHB(100).cas("a", "/r", 0, 1, 0, 10, history.KindOK).cas("b", "/r", 0, 1, 1, 9, history.KindFail).read("c", "/r", 11, 12, 1).build(), 0, ""},
		{"register: unknown cas that took effect", Linearizable(5 * time.Second),
			newHB(100).cas("a", "/r", 0, 1, 0, 1, history.KindUnknown).read("b", "/r", 50, 51, 1).cas("b", "/r", 1, 2, 52, 53, history.KindOK).build(), 0, ""},
		{"register: unknown cas that did not", Linearizable(5 * time.Second),
			newHB(100).cas("a", "/r", 0, 1, 0, 1, history.KindUnknown).read("b", "/r", 50, 51, 0).build(), 0, ""},
		{"register: two cas from 0 both succeed (lost update)", Linearizable(5 * time.Second),
			newHB(100).cas("a", "/r", 0, 1, 0, 5, history.KindOK).cas("b", "/r", 0, 1, 6, 8, history.KindOK).build(), 1, "not linearizable"},
		{"register: a stale read from another client is allowed", Linearizable(5 * time.Second),
			newHB(100).cas("a", "/r", 0, 1, 0, 5, history.KindOK).read("b", "/r", 6, 8, 0).build(), 0, ""},
		{"register with reads: stale read", LinearizableReads(5 * time.Second),
			newHB(100).cas("a", "/r", 0, 1, 0, 5, history.KindOK).read("b", "/r", 6, 8, 0).build(), 1, "not linearizable"},
		{"register with reads: fresh read", LinearizableReads(5 * time.Second),
			newHB(100).cas("a", "/r", 0, 1, 0, 5, history.KindOK).read("b", "/r", 6, 8, 1).build(), 0, ""},
		{"session reads: monotonic", SessionReads(),
			newHB(100).read("a", "/r", 0, 1, 3).cas("a", "/r", 3, 4, 2, 3, history.KindOK).read("a", "/r", 4, 5, 4).read("b", "/r", 6, 7, 2).build(), 0, ""},
		{"session reads: read older than own write", SessionReads(),
			newHB(100).read("a", "/r", 0, 1, 3).cas("a", "/r", 3, 4, 2, 3, history.KindOK).read("a", "/r", 4, 5, 3).build(), 1, "after it wrote 4"},
		{"session reads: read went back", SessionReads(),
			newHB(100).read("a", "/r", 0, 1, 3).read("a", "/r", 4, 5, 2).build(), 1, "after it read 3"},
		{"register: fenced cas rejected though value matched", Linearizable(5 * time.Second),
			newHB(100).cas("a", "/r", 0, 1, 0, 5, history.KindOK).op("b", history.FnFencedCAS, "/r", 1, 2, 6, 8, history.KindFail, "/r", 2).build(), 0, ""},
		{"register: fenced cas lost update", Linearizable(5 * time.Second),
			newHB(100).op("a", history.FnFencedCAS, "/r", 0, 1, 0, 5, history.KindOK, "/r", 1).op("b", history.FnFencedCAS, "/r", 0, 1, 6, 8, history.KindOK, "/r", 1).build(), 1, "not linearizable"},
		{"register: cas failed though value matched", Linearizable(5 * time.Second),
			newHB(100).cas("a", "/r", 0, 1, 0, 5, history.KindFail).build(), 1, "not linearizable"},

		// queue
		{"queue: delivered once in order", QueueDelivery(),
			newHB(100).op("p", history.FnPut, "x1", 1, 0, 0, 1, history.KindOK, "x1", 0).op("p", history.FnPut, "x2", 2, 0, 2, 3, history.KindOK, "x2", 0).
				op("c", history.FnTake, "", 0, 0, 4, 5, history.KindOK, "x1", 0).op("c", history.FnAck, "x1", 0, 0, 6, 7, history.KindOK, "x1", 0).
				op("c", history.FnTake, "", 0, 0, 8, 9, history.KindOK, "x2", 0).op("c", history.FnAck, "x2", 0, 0, 10, 11, history.KindOK, "x2", 0).build(), 0, ""},
		{"queue: redelivery of an unacked claim is fine", QueueDelivery(),
			newHB(100).op("p", history.FnPut, "x1", 1, 0, 0, 1, history.KindOK, "x1", 0).
				op("c1", history.FnTake, "", 0, 0, 4, 5, history.KindOK, "x1", 0).
				op("c2", history.FnTake, "", 0, 0, 8, 9, history.KindOK, "x1", 0).op("c2", history.FnAck, "x1", 0, 0, 10, 11, history.KindOK, "x1", 0).build(), 0, ""},
		{"queue: duplicate delivery after ack", QueueDelivery(),
			newHB(100).op("p", history.FnPut, "x1", 1, 0, 0, 1, history.KindOK, "x1", 0).
				op("c1", history.FnTake, "", 0, 0, 4, 5, history.KindOK, "x1", 0).op("c1", history.FnAck, "x1", 0, 0, 6, 7, history.KindOK, "x1", 0).
				op("c2", history.FnTake, "", 0, 0, 8, 9, history.KindOK, "x1", 0).build(), 1, "again after it was acked"},
		{"queue: lost item", QueueDelivery(),
			newHB(100).op("p", history.FnPut, "x1", 1, 0, 0, 1, history.KindOK, "x1", 0).build(), 1, "never taken"},
		{"queue: out of producer order", QueueDelivery(),
			newHB(100).op("p", history.FnPut, "x1", 1, 0, 0, 1, history.KindOK, "x1", 0).op("p", history.FnPut, "x2", 2, 0, 2, 3, history.KindOK, "x2", 0).
				op("c", history.FnTake, "", 0, 0, 4, 5, history.KindOK, "x2", 0).op("c", history.FnAck, "x2", 0, 0, 6, 7, history.KindOK, "x2", 0).
				op("c", history.FnTake, "", 0, 0, 8, 9, history.KindOK, "x1", 0).op("c", history.FnAck, "x1", 0, 0, 10, 11, history.KindOK, "x1", 0).build(), 1, "taken before"},
		{"queue: out of order behind a cancelled take that may hold the claim", QueueDelivery(),
			newHB(100).op("p", history.FnPut, "x1", 1, 0, 0, 1, history.KindOK, "x1", 0).op("p", history.FnPut, "x2", 2, 0, 2, 3, history.KindOK, "x2", 0).
				op("d", history.FnTake, "", 0, 0, 3, 4, history.KindFail, "", 0).
				op("c", history.FnTake, "", 0, 0, 5, 6, history.KindOK, "x2", 0).op("c", history.FnAck, "x2", 0, 0, 6, 7, history.KindOK, "x2", 0).
				op("c", history.FnTake, "", 0, 0, 8, 9, history.KindOK, "x1", 0).op("c", history.FnAck, "x1", 0, 0, 10, 11, history.KindOK, "x1", 0).build(), 0, ""},
		{"queue: out of order, the failed take came after", QueueDelivery(),
			newHB(100).op("p", history.FnPut, "x1", 1, 0, 0, 1, history.KindOK, "x1", 0).op("p", history.FnPut, "x2", 2, 0, 2, 3, history.KindOK, "x2", 0).
				op("c", history.FnTake, "", 0, 0, 4, 5, history.KindOK, "x2", 0).op("c", history.FnAck, "x2", 0, 0, 6, 7, history.KindOK, "x2", 0).
				op("d", history.FnTake, "", 0, 0, 7, 8, history.KindFail, "", 0).
				op("c", history.FnTake, "", 0, 0, 8, 9, history.KindOK, "x1", 0).op("c", history.FnAck, "x1", 0, 0, 10, 11, history.KindOK, "x1", 0).build(), 1, "taken before"},
		{"queue: out of order, the failed take ended before the put", QueueDelivery(),
			newHB(100).op("d", history.FnTake, "", 0, 0, 0, 1, history.KindFail, "", 0).
				op("p", history.FnPut, "x1", 1, 0, 2, 3, history.KindOK, "x1", 0).op("p", history.FnPut, "x2", 2, 0, 3, 4, history.KindOK, "x2", 0).
				op("c", history.FnTake, "", 0, 0, 5, 6, history.KindOK, "x2", 0).op("c", history.FnAck, "x2", 0, 0, 6, 7, history.KindOK, "x2", 0).
				op("c", history.FnTake, "", 0, 0, 8, 9, history.KindOK, "x1", 0).op("c", history.FnAck, "x1", 0, 0, 10, 11, history.KindOK, "x1", 0).build(), 1, "taken before"},
		{"queue: invented item", QueueDelivery(),
			newHB(100).op("c", history.FnTake, "", 0, 0, 4, 5, history.KindOK, "zz", 0).build(), 1, "nobody put"},
		{"queue lin: FIFO", QueueLinearizable(5 * time.Second),
			newHB(100).op("p", history.FnPut, "x1", 1, 0, 0, 1, history.KindOK, "x1", 0).op("p", history.FnPut, "x2", 2, 0, 2, 3, history.KindOK, "x2", 0).
				op("c", history.FnTake, "", 0, 0, 4, 5, history.KindOK, "x1", 0).op("c", history.FnTake, "", 0, 0, 6, 7, history.KindOK, "x2", 0).
				op("c", history.FnTake, "", 0, 0, 8, 9, history.KindOK, "", 0).build(), 0, ""},
		{"queue lin: duplicate delivery", QueueLinearizable(5 * time.Second),
			newHB(100).op("p", history.FnPut, "x1", 1, 0, 0, 1, history.KindOK, "x1", 0).
				op("c", history.FnTake, "", 0, 0, 4, 5, history.KindOK, "x1", 0).op("d", history.FnTake, "", 0, 0, 6, 7, history.KindOK, "x1", 0).build(), 1, "not linearizable"},

		// barriers
		{"barrier: passes after removal", BarrierPasses(),
			newHB(100).op("r", history.FnRemove, "/b", 0, 0, 10, 12, history.KindOK, "/b", 0).op("a", history.FnWait, "/b", 0, 0, 0, 13, history.KindOK, "/b", 0).build(), 0, ""},
		{"barrier: passed early", BarrierPasses(),
			newHB(100).op("r", history.FnRemove, "/b", 0, 0, 10, 12, history.KindOK, "/b", 0).op("a", history.FnWait, "/b", 0, 0, 0, 5, history.KindOK, "/b", 0).build(), 1, "before its removal"},
		{"double barrier: all in, all out", DoubleBarrier(2),
			newHB(100).op("a", history.FnEnter, "/d", 0, 0, 0, 11, history.KindOK, "/d", 0).op("b", history.FnEnter, "/d", 0, 0, 10, 12, history.KindOK, "/d", 0).
				op("a", history.FnLeave, "/d", 0, 0, 20, 31, history.KindOK, "/d", 0).op("b", history.FnLeave, "/d", 0, 0, 30, 32, history.KindOK, "/d", 0).build(), 0, ""},
		{"double barrier: entered before N arrived", DoubleBarrier(2),
			newHB(100).op("a", history.FnEnter, "/d", 0, 0, 0, 5, history.KindOK, "/d", 0).op("b", history.FnEnter, "/d", 0, 0, 10, 12, history.KindOK, "/d", 0).build(), 1, "only 1 of 2 members arrived"},
		{"double barrier: left before all began to leave", DoubleBarrier(2),
			newHB(100).op("a", history.FnEnter, "/d", 0, 0, 0, 11, history.KindOK, "/d", 0).op("b", history.FnEnter, "/d", 0, 0, 10, 12, history.KindOK, "/d", 0).
				op("a", history.FnLeave, "/d", 0, 0, 20, 25, history.KindOK, "/d", 0).op("b", history.FnLeave, "/d", 0, 0, 30, 32, history.KindOK, "/d", 0).build(), 1, "before b began to leave"},

		{"double barrier: a lost member is not waited for", DoubleBarrier(2),
			newHB(100).op("a", history.FnEnter, "/d", 0, 0, 0, 11, history.KindOK, "/d", 0).op("b", history.FnEnter, "/d", 0, 0, 10, 12, history.KindOK, "/d", 0).
				add(history.Event{Time: 15, Client: "b", Kind: history.KindLost, Key: "/d"}).
				op("a", history.FnLeave, "/d", 0, 0, 20, 25, history.KindOK, "/d", 0).op("b", history.FnLeave, "/d", 0, 0, 30, 32, history.KindFail, "/d", 0).build(), 0, ""},

		// two-phase commit
		{"2pc: commit agreed", TwoPhaseCommit(),
			newHB(100).op("p1", history.FnVote, "t1", 0, 0, 0, 1, history.KindOK, "t1", 1).op("p2", history.FnVote, "t1", 0, 0, 0, 1, history.KindOK, "t1", 1).
				op("co", history.FnDecide, "t1", 0, 0, 2, 3, history.KindOK, "t1", 1).
				op("p1", history.FnLearn, "t1", 0, 0, 4, 5, history.KindOK, "t1", 1).op("p2", history.FnLearn, "t1", 0, 0, 4, 5, history.KindOK, "t1", 1).
				readBack("t1", "", 1).readBack("t1", "p1", 1).readBack("t1", "p2", 1).build(), 0, ""},
		{"2pc: two decisions", TwoPhaseCommit(),
			newHB(100).op("p1", history.FnVote, "t1", 0, 0, 0, 1, history.KindOK, "t1", 0).
				op("co", history.FnDecide, "t1", 0, 0, 2, 3, history.KindOK, "t1", 0).op("co2", history.FnDecide, "t1", 0, 0, 2, 4, history.KindOK, "t1", 1).
				op("p1", history.FnLearn, "t1", 0, 0, 4, 5, history.KindOK, "t1", 0).readBack("t1", "", 0).readBack("t1", "p1", 0).build(), 2, "decided abort by co, then commit by co2"},
		{"2pc: commit despite an abort vote", TwoPhaseCommit(),
			newHB(100).op("p1", history.FnVote, "t1", 0, 0, 0, 1, history.KindOK, "t1", 0).op("co", history.FnDecide, "t1", 0, 0, 2, 3, history.KindOK, "t1", 1).
				op("p1", history.FnLearn, "t1", 0, 0, 4, 5, history.KindOK, "t1", 1).readBack("t1", "", 1).readBack("t1", "p1", 0).build(), 1, "vote read back is abort"},
		{"2pc: disagreement", TwoPhaseCommit(),
			newHB(100).op("p1", history.FnVote, "t1", 0, 0, 0, 1, history.KindOK, "t1", 1).op("co", history.FnDecide, "t1", 0, 0, 2, 3, history.KindOK, "t1", 1).
				op("p1", history.FnLearn, "t1", 0, 0, 4, 5, history.KindOK, "t1", 0).readBack("t1", "", 1).readBack("t1", "p1", 1).build(), 1, "ended with abort"},

		// nodes left
		{"nodes: none left", NoNodesLeft(), newHB(100).add(history.Event{Time: 1, Client: "runner", Kind: history.KindNodesLeft}).build(), 0, ""},
		{"nodes: one left", NoNodesLeft(), newHB(100).add(history.Event{Time: 1, Client: "runner", Kind: history.KindNodesLeft, Value: 1, Detail: "/x/_c_1"}).build(), 1, "left behind"},

		// liveness
		{"liveness: progress after heal", Liveness(20 * time.Millisecond),
			newHB(100).read("a", "/r", 0, 1, 0).fault("cut", 10, 50).read("a", "/r", 55, 60, 0).build(), 0, ""},
		{"liveness: no progress after heal", Liveness(20 * time.Millisecond),
			newHB(100).read("a", "/r", 0, 1, 0).fault("cut", 10, 50).read("a", "/r", 55, 90, 0).build(), 1, "no progress within"},
		// A fault that could not be injected healed nothing: no client owes
		// progress after its end (a CI run's refused pause once failed
		// liveness for a scenario that stopped right after the refusal).
		{"liveness: a fault not injected is no heal", Liveness(20 * time.Millisecond),
			newHB(100).read("a", "/r", 0, 1, 0).notInjected("pause", 40).build(), 0, ""},
		// counter linearizability
		{"counter: sequential adds", CounterLinearizable(5 * time.Second),
			newHB(100).addOp("a", "/n", 1, 0, 5, history.KindOK, 1).addOp("b", "/n", 1, 6, 8, history.KindOK, 2).addOp("a", "/n", 1, 9, 10, history.KindFail, 0).addOp("b", "/n", 2, 11, 12, history.KindOK, 4).build(), 0, ""},
		{"counter: concurrent adds, either order", CounterLinearizable(5 * time.Second),
			newHB(100).addOp("a", "/n", 1, 0, 10, history.KindOK, 2).addOp("b", "/n", 1, 1, 9, history.KindOK, 1).build(), 0, ""},
		{"counter: an unknown add explains a jump", CounterLinearizable(5 * time.Second),
			newHB(100).addOp("a", "/n", 1, 0, -1, history.KindUnknown, 0).addOp("b", "/n", 1, 20, 30, history.KindOK, 2).build(), 0, ""},
		{"counter: applied twice, counted once", CounterLinearizable(5 * time.Second),
			newHB(100).addOp("a", "/n", 1, 0, 10, history.KindOK, 2).addOp("b", "/n", 1, 20, 30, history.KindOK, 3).build(), 1, "not linearizable"},
		{"counter: a result seen before its add was called", CounterLinearizable(5 * time.Second),
			newHB(100).addOp("a", "/n", 1, 0, 10, history.KindOK, 1).addOp("b", "/n", 1, 20, 30, history.KindOK, 1).build(), 1, "not linearizable"},
		// semaphore with a changing maximum
		{"semaphore-max: two holders under 2", SemaphoreMax(),
			newHB(100).setMax("m", "/s", 2, 0, 1, history.KindOK).lease("a", "/s", 2, 3, 50).lease("b", "/s", 4, 5, 60).build(), 0, ""},
		{"semaphore-max: two holders under 1", SemaphoreMax(),
			newHB(100).setMax("m", "/s", 1, 0, 1, history.KindOK).lease("a", "/s", 2, 3, 50).lease("b", "/s", 4, 5, 60).build(), 1, "2 holders of /s"},
		{"semaphore-max: lowered after both were granted, nobody revoked", SemaphoreMax(),
			newHB(100).setMax("m", "/s", 2, 0, 1, history.KindOK).lease("a", "/s", 2, 3, 80).lease("b", "/s", 4, 5, 80).setMax("m", "/s", 1, 10, 11, history.KindOK).build(), 0, ""},
		{"semaphore-max: granted beside holders kept after the max was lowered", SemaphoreMax(),
			newHB(100).setMax("m", "/s", 3, 0, 1, history.KindOK).lease("a", "/s", 2, 3, 90).lease("b", "/s", 4, 5, 90).
				setMax("m", "/s", 1, 10, 11, history.KindOK).lease("c", "/s", 20, 25, 30).build(), 1, "3 holders of /s"},
		{"semaphore-max: lowered while the acquisition ran", SemaphoreMax(),
			newHB(100).setMax("m", "/s", 3, 0, 1, history.KindOK).lease("a", "/s", 2, 3, 90).lease("b", "/s", 4, 5, 90).
				setMax("m", "/s", 1, 20, 22, history.KindOK).lease("c", "/s", 18, 25, 30).build(), 0, ""},
		{"semaphore-max: raised", SemaphoreMax(),
			newHB(100).setMax("m", "/s", 1, 0, 1, history.KindOK).lease("a", "/s", 2, 3, 50).setMax("n", "/s", 2, 10, 11, history.KindOK).lease("b", "/s", 12, 14, 60).build(), 0, ""},
		{"semaphore-max: a change of unknown outcome may have been read", SemaphoreMax(),
			newHB(100).setMax("m", "/s", 1, 0, 1, history.KindOK).lease("a", "/s", 2, 3, 50).setMax("m", "/s", 2, 10, 11, history.KindUnknown).lease("b", "/s", 12, 14, 60).build(), 0, ""},
		{"semaphore-max: a failed change was not", SemaphoreMax(),
			newHB(100).setMax("m", "/s", 1, 0, 1, history.KindOK).lease("a", "/s", 2, 3, 50).setMax("m", "/s", 2, 10, 11, history.KindFail).lease("b", "/s", 12, 14, 60).build(), 1, "2 holders of /s"},
		{"semaphore-max: called before the other's grant, granted after it", SemaphoreMax(),
			newHB(100).setMax("m", "/s", 1, 0, 1, history.KindOK).lease("a", "/s", 2, 3, 50).lease("b", "/s", 1, 20, 60).build(), 1, "2 holders of /s"},
		{"semaphore-max: the old value stays possible until the next change returns", SemaphoreMax(),
			newHB(100).setMax("m", "/s", 2, 0, 1, history.KindOK).lease("a", "/s", 2, 3, 50).setMax("m", "/s", 1, 10, 30, history.KindOK).lease("b", "/s", 20, 25, 60).build(), 0, ""},
		{"semaphore-max: holdings of other keys do not count", SemaphoreMax(),
			newHB(100).setMax("m", "/s", 1, 0, 1, history.KindOK).setMax("m", "/t", 1, 0, 1, history.KindOK).lease("a", "/s", 2, 3, 50).lease("b", "/t", 4, 5, 60).build(), 0, ""},
		{"liveness: no progress at all", Liveness(20 * time.Millisecond),
			newHB(100).op("a", history.FnRead, "/r", 0, 0, 0, 50, history.KindFail, "/r", 0).build(), 1, "of the start"},
	}, append(append(membershipCases(), discoveryCases()...), cacheCases()...)...)
}

func TestCheckers(t *testing.T) {
	for _, tt := range checkerCases() {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.checker.Run(tt.h)
			if len(r.Violations) != tt.bad {
				t.Fatalf("%s: %d violations, want %d: %+v", r.Checker, len(r.Violations), tt.bad, r.Violations)
			}
			if r.Inconclusive {
				t.Fatalf("inconclusive: %s", r.Note)
			}
			if tt.bad > 0 && !strings.Contains(r.Violations[0].Msg, tt.want) {
				t.Fatalf("violation %q does not say %q", r.Violations[0].Msg, tt.want)
			}
			if r.Checked == 0 {
				t.Fatalf("checked nothing")
			}
		})
	}
}

// TestEveryCheckerCanFail: every checker has a case that must fail and one
// that must pass.
func TestEveryCheckerCanFail(t *testing.T) {
	fails, passes := map[string]bool{}, map[string]bool{}
	for _, tt := range append(checkerCases(), convergedCases()...) {
		if tt.bad > 0 {
			fails[tt.checker.Name] = true
		} else {
			passes[tt.checker.Name] = true
		}
	}
	for _, c := range []Checker{MutualExclusion(1), MutualExclusion(2), SingleLeader(), WriterExclusive(), FencedWrites(),
		Converged(nil, time.Second),
		Linearizable(time.Second), LinearizableReads(time.Second), SessionReads(), QueueDelivery(), QueueLinearizable(time.Second), BarrierPasses(), DoubleBarrier(2),
		TwoPhaseCommit(), NoNodesLeft(), Liveness(time.Second), CounterLinearizable(time.Second), SemaphoreMax(), Membership(time.Second),
		DiscoveryConverges(time.Second)} {
		if !fails[c.Name] || !passes[c.Name] {
			t.Errorf("checker %s: failing case %v, passing case %v", c.Name, fails[c.Name], passes[c.Name])
		}
	}
}
