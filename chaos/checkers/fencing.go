package checkers

import (
	"sort"

	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// FencedWrites proves the fencing invariant over fenced-accepted and
// fenced-rejected events, where every accepted write of a key stored the
// next value of a counter (Value) under a holder's token (Token):
//
//   - every accepted write carries the token of the holding current when
//     it was sent: its writer held a holding with that token, and no
//     holding with a greater token had been acquired before the write's
//     fenced-cas was invoked (a stale holder's write is caught even when
//     the new holder has not written yet);
//   - in the order the writes were applied (their values), tokens never go
//     back;
//   - no two accepted writes stored the same value: no update was lost.
//
// Holdings of every key count: a workload checked by FencedWrites guards
// its counter with one lock (or election), whose tokens grow.
func FencedWrites() Checker {
	return Checker{
		Name:      "fencing",
		Invariant: "accepted fenced writes carry the current holder's token, in token order, and lose no update",
		Check:     checkFencing,
	}
}

func checkFencing(h history.History) Result {
	var v violations
	byKey := map[string][]history.Event{}
	checked := 0
	type written struct {
		client, key string
		value       int64
	}
	calls := map[written]int64{}
	for _, o := range history.Operations(h) {
		if o.Fn == history.FnFencedCAS && o.Result == history.KindOK {
			calls[written{o.Client, o.Key, o.In}] = o.Call
		}
	}
	holdings := history.Holdings(h)
	for _, e := range h.Events {
		switch e.Kind {
		case history.KindFencedOK:
			byKey[e.Key] = append(byKey[e.Key], e)
			checked++
			sent, ok := calls[written{e.Client, e.Key, e.Value}]
			if !ok {
				sent = e.Time
			}
			own, newer := false, history.Holding{}
			for _, x := range holdings {
				if x.From > sent {
					break
				}
				if x.Client == e.Client && x.Token == e.Token {
					own = true
				}
				if x.Token > e.Token && x.Token > newer.Token {
					newer = x
				}
			}
			switch {
			case !own:
				v.add(e.Time, e.Client, "write of %d to %s accepted with token %d, which names no holding of %s", e.Value, e.Key, e.Token, e.Client)
			case newer.Token != 0:
				v.add(e.Time, e.Client, "stale write accepted on %s: %s wrote %d with token %d at %s, after %s acquired token %d at %s",
					e.Key, e.Client, e.Value, e.Token, history.Rel(h, sent), newer.Client, newer.Token, history.Rel(h, newer.From))
			}
		case history.KindFencedRejected:
			checked++
		}
	}
	for key, ws := range byKey {
		sort.SliceStable(ws, func(i, j int) bool { return ws[i].Value < ws[j].Value })
		for i := 1; i < len(ws); i++ {
			a, b := ws[i-1], ws[i]
			if a.Value == b.Value {
				v.add(b.Time, b.Client, "lost update on %s: %s (token %d) and %s (token %d) both wrote %d",
					key, a.Client, a.Token, b.Client, b.Token, b.Value)
			}
			if b.Token < a.Token {
				v.add(b.Time, b.Client, "stale write accepted on %s: %s wrote %d with token %d after %s wrote %d with token %d",
					key, b.Client, b.Value, b.Token, a.Client, a.Value, a.Token)
			}
		}
	}
	return v.result(checked)
}
