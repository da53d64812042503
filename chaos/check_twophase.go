package chaos

// TwoPhaseCommit proves the two-phase commit invariants per transaction
// (Key): at most one decision is written, once; a commit decision requires
// a successful commit vote (Value 1) from every participant that voted;
// every participant that learnt an outcome learnt the decision; and, once a
// decision exists, every participant that voted ends with it.
func TwoPhaseCommit() Checker {
	return Checker{
		Name:      "two-phase-commit",
		Invariant: "one decision, written once; commit only if all voted commit; all participants agree",
		Check:     checkTwoPhase,
	}
}

func checkTwoPhase(h History) Result {
	var v violations
	type txn struct {
		decisions []Operation
		votes     map[string]int64
		learnt    map[string]int64
	}
	txns := map[string]*txn{}
	var order []string
	get := func(k string) *txn {
		if txns[k] == nil {
			txns[k] = &txn{votes: map[string]int64{}, learnt: map[string]int64{}}
			order = append(order, k)
		}
		return txns[k]
	}
	for _, o := range Operations(h) {
		if o.Result != KindOK {
			continue
		}
		switch o.Fn {
		case FnVote:
			get(o.Key).votes[o.Client] = o.Out
		case FnDecide:
			get(o.Key).decisions = append(get(o.Key).decisions, o)
		case FnLearn:
			get(o.Key).learnt[o.Client] = o.Out
		}
	}
	for _, k := range order {
		t := txns[k]
		if len(t.decisions) > 1 {
			d := t.decisions[1]
			v.add(d.Return, d.Client, "transaction %s decided %d times (second: %s by %s)", k, len(t.decisions), outcome(d.Out), d.Client)
		}
		if len(t.decisions) == 0 {
			continue
		}
		d := t.decisions[0]
		if d.Out == 1 {
			for p, vote := range t.votes {
				if vote != 1 {
					v.add(d.Return, d.Client, "transaction %s committed although %s voted abort", k, p)
				}
			}
		}
		for p := range t.votes {
			got, ok := t.learnt[p]
			switch {
			case !ok:
				v.add(h.End, p, "participant %s of %s never learnt the decision (%s)", p, k, outcome(d.Out))
			case got != d.Out:
				v.add(h.End, p, "participant %s of %s ended with %s, the decision was %s", p, k, outcome(got), outcome(d.Out))
			}
		}
	}
	return v.result(len(order))
}

func outcome(v int64) string {
	if v == 1 {
		return "commit"
	}
	return "abort"
}
