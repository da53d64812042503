package history

import "sort"

// Holding is the interval during which a client believed it held Key: from
// its acquired event to its released or lost event, or to the end of the
// history when neither came.
type Holding struct {
	Client string
	Key    string
	Mode   string
	Token  int64
	From   int64
	To     int64
	// Ended says how the interval ended: KindReleased, KindLost, or "" when
	// it ran to the end of the history.
	Ended Kind
}

// Holdings extracts every holding of h, ordered by start.
func Holdings(h History) []Holding {
	type ck struct{ client, key string }
	open := map[ck]int{}
	var out []Holding
	for _, e := range h.Events {
		k := ck{e.Client, e.Key}
		switch e.Kind {
		case KindAcquired:
			if i, ok := open[k]; ok { // acquired again without an end: close the old one here
				out[i].To = e.Time
			}
			open[k] = len(out)
			out = append(out, Holding{Client: e.Client, Key: e.Key, Mode: e.Mode, Token: e.Token, From: e.Time, To: h.End})
		case KindReleased, KindLost:
			if i, ok := open[k]; ok {
				out[i].To, out[i].Ended = e.Time, e.Kind
				delete(open, k)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].From < out[j].From })
	return out
}
