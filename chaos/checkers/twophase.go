package checkers

import (
	"fmt"
	"sort"

	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// TwoPhaseCommit proves the two-phase commit invariants per transaction
// (Key), against what the workload read back from ZooKeeper once every
// client stopped (read-back events: each site's vote node, and the decision
// node with its data version in Arg), since a client may not learn the
// outcome of its own write:
//
//   - every transaction whose Begin returned ok is decided: it was read
//     back, with a decision, even when its coordinator crashed (crash and
//     resume events) before deciding it;
//   - one decision: the decision node was written once (read back at data
//     version 0), every decision reported (decide ok, by the coordinator
//     or by a resumed one) is the one read back, and a transaction someone
//     decided or learnt must have been read back, with a decision;
//   - commit only if every site's commit vote is read back: every site of
//     a committed transaction has a vote node saying commit (a vote of
//     unknown outcome counts as whatever was read back), written before
//     the decision (the vote's last zxid below the decision's creation
//     zxid, when the read-back carries them): a commit decided before a
//     site voted was decided without its vote, even if the site later
//     voted commit;
//   - a vote that returned ok is the vote read back;
//   - every participant that learnt an outcome learnt the decision, every
//     participant whose vote returned ok learnt it, and every participant
//     that resumed a transaction after a crash learnt it after resuming.
//
// Its note counts the crashes and resumptions of the history.
func TwoPhaseCommit() Checker {
	return Checker{
		Name:      "two-phase-commit",
		Invariant: "every transaction begun is decided once, as ZooKeeper says; commit only if every site's commit vote is read back; all participants, resumed ones included, agree",
		Check:     checkTwoPhase,
	}
}

func checkTwoPhase(h history.History) Result {
	var v violations
	type learn struct {
		out int64
		at  int64 // return time of the latest learn ok
	}
	type txn struct {
		begun     *history.Operation
		decisions []history.Operation
		votes     map[string]int64 // vote ok
		learnt    map[string]learn
		resumed   map[string]int64 // participant -> time of its latest resume event
		audited   bool
		decision  int64            // read back: 1, 0, -1 absent
		version   int64            // the decision node's data version read back
		zxid      int64            // the decision node's creation zxid read back, 0 unknown
		readVotes map[string]int64 // read back per site: 1, 0, -1 absent
		voteZxids map[string]int64 // each vote's last zxid read back, 0 unknown
	}
	txns := map[string]*txn{}
	var order []string
	get := func(k string) *txn {
		if txns[k] == nil {
			txns[k] = &txn{votes: map[string]int64{}, learnt: map[string]learn{}, resumed: map[string]int64{},
				decision: -1, readVotes: map[string]int64{}, voteZxids: map[string]int64{}}
			order = append(order, k)
		}
		return txns[k]
	}
	crashed, resumed := 0, 0
	for _, e := range h.Events {
		switch e.Kind {
		case history.KindCrash:
			crashed++
		case history.KindResume:
			resumed++
			if e.Fn == history.FnLearn {
				get(e.Key).resumed[e.Client] = e.Time
			}
		case history.KindReadBack:
			t := get(e.Key)
			t.audited = true
			switch e.Fn {
			case history.FnDecide:
				t.decision, t.version, t.zxid = e.Value, e.Arg, e.Token
			case history.FnVote:
				t.readVotes[e.Detail] = e.Value
				t.voteZxids[e.Detail] = e.Token
			}
		}
	}
	for _, o := range history.Operations(h) {
		if o.Result != history.KindOK {
			continue
		}
		switch o.Fn {
		case history.FnBegin:
			if t := get(o.Key); t.begun == nil {
				t.begun = &o
			}
		case history.FnVote:
			get(o.Key).votes[o.Client] = o.Out
		case history.FnDecide:
			get(o.Key).decisions = append(get(o.Key).decisions, o)
		case history.FnLearn:
			get(o.Key).learnt[o.Client] = learn{out: o.Out, at: o.Return}
		}
	}
	for _, k := range order {
		t := txns[k]
		for _, d := range t.decisions[min(1, len(t.decisions)):] {
			if first := t.decisions[0]; d.Out != first.Out {
				v.add(d.Return, d.Client, "transaction %s decided %s by %s, then %s by %s", k, history.Outcome(first.Out), first.Client, history.Outcome(d.Out), d.Client)
			}
		}
		reported := len(t.decisions) > 0 || len(t.learnt) > 0
		switch {
		case !t.audited && t.begun != nil:
			v.add(h.End, "", "transaction %s began (%s at %s) but was not read back from ZooKeeper", k, t.begun.Client, history.Rel(h, t.begun.Return))
			continue
		case !t.audited && reported:
			v.add(h.End, "", "transaction %s was decided or learnt but not read back from ZooKeeper", k)
			continue
		case !t.audited:
			continue
		case t.decision < 0 && t.begun != nil:
			v.add(h.End, "", "transaction %s began (%s at %s) but ZooKeeper holds no decision after the run", k, t.begun.Client, history.Rel(h, t.begun.Return))
		case t.decision < 0 && reported:
			v.add(h.End, "", "transaction %s was decided or learnt, but ZooKeeper holds no decision", k)
		case t.version != 0:
			v.add(h.End, "", "the decision of %s was written more than once (data version %d)", k, t.version)
		}
		for _, d := range t.decisions {
			if t.decision >= 0 && d.Out != t.decision {
				v.add(d.Return, d.Client, "%s decided %s on %s, ZooKeeper read back %s", d.Client, history.Outcome(d.Out), k, history.Outcome(t.decision))
			}
		}
		sites := make([]string, 0, len(t.readVotes))
		for s := range t.readVotes {
			sites = append(sites, s)
		}
		sort.Strings(sites)
		if t.decision == 1 {
			if len(sites) == 0 {
				v.add(h.End, "", "transaction %s committed, but no site's vote was read back", k)
			}
			for _, s := range sites {
				if rv := t.readVotes[s]; rv != 1 {
					v.add(h.End, s, "transaction %s committed although %s's vote read back is %s", k, s, voteName(rv))
				} else if vz := t.voteZxids[s]; vz != 0 && t.zxid != 0 && vz > t.zxid {
					v.add(h.End, s, "transaction %s committed (zxid 0x%x) before %s voted commit (zxid 0x%x): decided without its vote", k, t.zxid, s, vz)
				}
			}
		}
		for _, p := range sortedKeys(t.votes) {
			if rv, ok := t.readVotes[p]; ok && rv != t.votes[p] {
				v.add(h.End, p, "%s's vote on %s returned ok as %s, but read back %s", p, k, history.Outcome(t.votes[p]), voteName(rv))
			}
		}
		if t.decision < 0 {
			continue
		}
		for _, p := range sortedKeys(t.learnt) {
			if got := t.learnt[p].out; got != t.decision {
				v.add(h.End, p, "participant %s of %s ended with %s, the decision read back is %s", p, k, history.Outcome(got), history.Outcome(t.decision))
			}
		}
		for _, p := range sortedKeys(t.votes) {
			if _, ok := t.learnt[p]; !ok {
				v.add(h.End, p, "participant %s of %s never learnt the decision (%s)", p, k, history.Outcome(t.decision))
			}
		}
		for _, p := range sortedKeys(t.resumed) {
			if l, ok := t.learnt[p]; !ok || l.at < t.resumed[p] {
				v.add(t.resumed[p], p, "participant %s resumed %s after a crash but did not learn the decision (%s) afterwards", p, k, history.Outcome(t.decision))
			}
		}
	}
	r := v.result(len(order))
	if crashed > 0 || resumed > 0 {
		note := fmt.Sprintf("%d crashes, %d resumptions", crashed, resumed)
		if r.Note != "" {
			note = r.Note + "; " + note
		}
		r.Note = note
	}
	return r
}

// sortedKeys returns m's keys, sorted (so violations come in a stable
// order).
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func voteName(v int64) string {
	if v < 0 {
		return "missing"
	}
	return history.Outcome(v)
}
