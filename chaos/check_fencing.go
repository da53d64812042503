package chaos

import "sort"

// FencedWrites proves the fencing invariant over fenced-accepted and
// fenced-rejected events, where every accepted write of a key stored the
// next value of a counter (Value) under a holder's token (Token):
//
//   - in the order the writes were applied (their values), tokens never go
//     back: no write from a stale holder was accepted after a newer
//     holder's;
//   - no two accepted writes stored the same value: no update was lost.
func FencedWrites() Checker {
	return Checker{
		Name:      "fencing",
		Invariant: "accepted fenced writes are in token order (stale ones rejected) and lose no update",
		Check:     checkFencing,
	}
}

func checkFencing(h History) Result {
	var v violations
	byKey := map[string][]Event{}
	checked := 0
	for _, e := range h.Events {
		switch e.Kind {
		case KindFencedOK:
			byKey[e.Key] = append(byKey[e.Key], e)
			checked++
		case KindFencedRejected:
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
