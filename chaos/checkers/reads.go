package checkers

import "github.com/zkrecipes/zkrecipes/chaos/history"

// SessionReads proves ZooKeeper's per-client ordering for a counter that
// only grows (each cas writes its expected value plus one): a client never
// reads a value older than one it read before or one it wrote itself
// (session consistency: a client never sees the ensemble go back in time,
// even across reconnections to another server).
func SessionReads() Checker {
	return Checker{
		Name:      "session-reads",
		Invariant: "a client never reads a value older than one it read or wrote",
		Check:     checkSessionReads,
	}
}

func checkSessionReads(h history.History) Result {
	var v violations
	type seen struct {
		value int64
		how   string
	}
	last := map[string]map[string]seen{} // client -> key -> latest value known
	checked := 0
	for _, o := range history.Operations(h) { // in call order; a client's operations do not overlap
		if o.Result != history.KindOK {
			continue
		}
		m := last[o.Client]
		if m == nil {
			m = map[string]seen{}
			last[o.Client] = m
		}
		switch o.Fn {
		case history.FnRead:
			checked++
			if s, ok := m[o.Key]; ok && o.Out < s.value {
				v.add(o.Return, o.Client, "%s read %d from %s after it %s %d", o.Client, o.Out, o.Key, s.how, s.value)
			}
			if s := m[o.Key]; o.Out >= s.value {
				m[o.Key] = seen{o.Out, "read"}
			}
		case history.FnCAS:
			if s := m[o.Key]; o.In >= s.value {
				m[o.Key] = seen{o.In, "wrote"}
			}
		}
	}
	return v.result(checked)
}
