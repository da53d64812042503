package checkers

import (
	"strings"
	"testing"

	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// tpc builds two-phase histories for TestTwoPhaseCrashes: coordinator co,
// sites p1 and p2; times are milliseconds after start.
type tpc struct{ *hb }

func newTPC() tpc { return tpc{newHB(100)} }

func (b tpc) begin(tx string, at int64) tpc {
	b.op("co", history.FnBegin, tx, 0, 0, at, at+1, history.KindOK, tx, 1)
	return b
}

func (b tpc) vote(site, tx string, v, at int64) tpc {
	b.op(site, history.FnVote, tx, 0, 0, at, at+1, history.KindOK, tx, v)
	return b
}

func (b tpc) decide(tx string, d, at int64) tpc {
	b.op("co", history.FnDecide, tx, 0, 0, at, at+1, history.KindOK, tx, d)
	return b
}

func (b tpc) learn(site, tx string, d, at int64) tpc {
	b.op(site, history.FnLearn, tx, 0, 0, at, at+1, history.KindOK, tx, d)
	return b
}

func (b tpc) crash(client, tx, where string, at int64) tpc {
	fn := history.FnLearn
	if client == "co" {
		fn = history.FnDecide
	}
	b.add(history.Event{Time: at * ms, Client: client, Kind: history.KindCrash, Fn: fn, Key: tx, Detail: where})
	return b
}

func (b tpc) resume(client, tx, detail string, at int64) tpc {
	fn := history.FnLearn
	if client == "co" {
		fn = history.FnDecide
	}
	b.add(history.Event{Time: at * ms, Client: client, Kind: history.KindResume, Fn: fn, Key: tx, Detail: detail})
	return b
}

// readBack reads back tx's decision d (-1 absent) at data version 0 and
// each site's vote (1 commit, 0 abort, -1 absent) in votes, p1 first.
func (b tpc) readBack(tx string, d int64, votes ...int64) tpc {
	return b.readBackAt(tx, d, 0, votes...)
}

// readBackAt is readBack with the decision at data version.
func (b tpc) readBackAt(tx string, d, version int64, votes ...int64) tpc {
	b.add(history.Event{Time: 99 * ms, Client: history.Auditor, Kind: history.KindReadBack, Fn: history.FnDecide, Key: tx, Value: d, Arg: version})
	for i, v := range votes {
		b.hb.readBack(tx, []string{"p1", "p2"}[i], v)
	}
	return b
}

func TestTwoPhaseCrashes(t *testing.T) {
	for _, tt := range []struct {
		name string
		h    history.History
		bad  int
		want string // substring of the first violation
	}{
		{"coordinator crashes after begin and after decide, a site before and after its vote, all resumed",
			newTPC().begin("t1", 0).vote("p1", "t1", 1, 2).crash("co", "t1", history.CrashAfterBegin, 3).
				resume("co", "t1", "pending", 5).vote("p2", "t1", 1, 6).decide("t1", 1, 7).
				learn("p1", "t1", 1, 9).learn("p2", "t1", 1, 9).
				begin("t2", 10).vote("p1", "t2", 1, 11).vote("p2", "t2", 1, 11).decide("t2", 1, 12).
				crash("co", "t2", history.CrashAfterDecide, 14).resume("co", "t2", "decided", 15).decide("t2", 1, 16).
				crash("p2", "t2", history.CrashAfterVote, 13).resume("p2", "t2", "voted commit", 17).
				learn("p1", "t2", 1, 18).learn("p2", "t2", 1, 19).
				begin("t3", 20).crash("p2", "t3", history.CrashBeforeVote, 21).vote("p1", "t3", 1, 21).
				decide("t3", 0, 23).learn("p1", "t3", 0, 24).resume("p2", "t3", "not voted", 25).learn("p2", "t3", 0, 26).
				readBack("t1", 1, 1, 1).readBack("t2", 1, 1, 1).readBack("t3", 0, 1, -1).build(), 0, ""},
		{"a resumed coordinator decides other than the decision written",
			newTPC().begin("t1", 0).vote("p1", "t1", 1, 1).vote("p2", "t1", 1, 1).decide("t1", 1, 2).
				crash("co", "t1", history.CrashAfterDecide, 4).resume("co", "t1", "decided", 5).decide("t1", 0, 6).
				learn("p1", "t1", 1, 8).learn("p2", "t1", 1, 8).readBack("t1", 1, 1, 1).build(),
			2, "decided commit by co, then abort by co"},
		{"a transaction begun before a crash is never decided",
			newTPC().begin("t1", 0).vote("p1", "t1", 1, 1).crash("co", "t1", history.CrashAfterBegin, 2).
				begin("t2", 10).vote("p1", "t2", 1, 11).vote("p2", "t2", 1, 11).decide("t2", 1, 12).
				learn("p1", "t2", 1, 13).learn("p2", "t2", 1, 13).
				readBack("t1", -1, 1, -1).readBack("t2", 1, 1, 1).build(), 1, "t1 began (co at 1ms) but ZooKeeper holds no decision"},
		{"a transaction begun is never read back",
			newTPC().begin("t1", 0).crash("co", "t1", history.CrashAfterBegin, 2).build(), 1, "t1 began (co at 1ms) but was not read back"},
		{"a resumed participant does not learn the decision",
			newTPC().begin("t1", 0).vote("p1", "t1", 1, 1).crash("p2", "t1", history.CrashBeforeVote, 1).decide("t1", 0, 3).
				learn("p1", "t1", 0, 4).resume("p2", "t1", "not voted", 5).readBack("t1", 0, 1, -1).build(),
			1, "p2 resumed t1 after a crash but did not learn"},
		{"a participant learnt before its crash, not after resuming",
			newTPC().begin("t1", 0).vote("p1", "t1", 1, 1).vote("p2", "t1", 1, 1).decide("t1", 1, 2).
				learn("p1", "t1", 1, 3).learn("p2", "t1", 1, 3).crash("p2", "t1", history.CrashAfterVote, 5).
				resume("p2", "t1", "voted commit", 6).readBack("t1", 1, 1, 1).build(),
			1, "did not learn the decision (commit) afterwards"},
		{"the decision node was written twice",
			newTPC().begin("t1", 0).vote("p1", "t1", 1, 1).vote("p2", "t1", 1, 1).decide("t1", 1, 2).
				learn("p1", "t1", 1, 3).learn("p2", "t1", 1, 3).
				readBackAt("t1", 1, 1, 1, 1).build(), 1, "written more than once"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := TwoPhaseCommit().Run(tt.h)
			if len(r.Violations) != tt.bad {
				t.Fatalf("%d violations, want %d: %+v", len(r.Violations), tt.bad, r.Violations)
			}
			if tt.bad > 0 && !strings.Contains(r.Violations[0].Msg, tt.want) {
				t.Fatalf("violation %q does not say %q", r.Violations[0].Msg, tt.want)
			}
			if r.Checked == 0 {
				t.Fatal("checked nothing")
			}
		})
	}
}

// TestTwoPhaseCrashNote: the checker's note counts the crashes and the
// resumptions of the history.
func TestTwoPhaseCrashNote(t *testing.T) {
	h := newTPC().begin("t1", 0).vote("p1", "t1", 1, 1).crash("co", "t1", history.CrashAfterBegin, 2).
		resume("co", "t1", "pending", 3).vote("p2", "t1", 1, 4).decide("t1", 1, 5).
		learn("p1", "t1", 1, 6).learn("p2", "t1", 1, 6).readBack("t1", 1, 1, 1).build()
	r := TwoPhaseCommit().Run(h)
	if !r.OK() || r.Note != "1 crashes, 1 resumptions" {
		t.Fatalf("violations %+v, note %q", r.Violations, r.Note)
	}
}

// TestTwoPhaseCommitBeforeVote: a commit whose decision node was created
// before a site's vote node was written was decided without that vote,
// even when the site voted commit afterwards (the two-phase timeout
// mutant's commit, when its target voted on reconnecting); a commit after
// every vote passes; without zxids (older histories) it is not judged.
func TestTwoPhaseCommitBeforeVote(t *testing.T) {
	readBack := func(b tpc, decision int64, votes ...int64) tpc {
		b.add(history.Event{Time: 99 * ms, Client: history.Auditor, Kind: history.KindReadBack, Fn: history.FnDecide, Key: "tx1", Value: 1, Token: decision})
		for i, z := range votes {
			b.add(history.Event{Time: 99 * ms, Client: history.Auditor, Kind: history.KindReadBack, Fn: history.FnVote, Key: "tx1", Detail: []string{"p1", "p2"}[i], Value: 1, Token: z})
		}
		return b
	}
	tests := []struct {
		name     string
		decision int64
		votes    []int64
		want     string
	}{
		{"every vote before the commit", 30, []int64{10, 20}, ""},
		{"p2 voted after the commit", 30, []int64{10, 40}, "committed (zxid 0x1e) before p2 voted commit (zxid 0x28)"},
		{"zxids unknown", 0, []int64{10, 40}, ""},
		{"a vote's zxid unknown", 30, []int64{10, 0}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newTPC().begin("tx1", 1).vote("p1", "tx1", 1, 2).vote("p2", "tx1", 1, 50).decide("tx1", 1, 40).
				learn("p1", "tx1", 1, 60).learn("p2", "tx1", 1, 61)
			r := TwoPhaseCommit().Run(readBack(b, tt.decision, tt.votes...).build())
			got := ""
			for _, v := range r.Violations {
				got += v.Msg
			}
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Fatalf("violations %q, want %q", got, tt.want)
			}
		})
	}
}
