package chaos

import (
	"fmt"
	"sort"
)

// BarrierPasses proves that nobody passes a barrier before it is removed:
// every successful wait on a key returns no earlier than the first invoke
// of a remove of that key.
func BarrierPasses() Checker {
	return Checker{
		Name:      "barrier",
		Invariant: "nobody passes a barrier before it is removed",
		Check:     checkBarrier,
	}
}

func checkBarrier(h History) Result {
	var v violations
	ops := Operations(h)
	removed := map[string]int64{}
	for _, o := range ops {
		if o.Fn == FnRemove {
			if t, ok := removed[o.Key]; !ok || o.Call < t {
				removed[o.Key] = o.Call
			}
		}
	}
	checked := 0
	for _, o := range ops {
		if o.Fn != FnWait || o.Result != KindOK {
			continue
		}
		checked++
		t, ok := removed[o.Key]
		switch {
		case !ok:
			v.add(o.Return, o.Client, "%s passed barrier %s, which was never removed", o.Client, o.Key)
		case o.Return < t:
			v.add(o.Return, o.Client, "%s passed barrier %s at %s, before its removal began at %s", o.Client, o.Key, rel(h, o.Return), rel(h, t))
		}
	}
	return v.result(checked)
}

// DoubleBarrier proves the double barrier of n members: nobody's enter
// returns before the n-th member invoked enter, and nobody's leave returns
// before every member that entered has invoked leave. A member that
// recorded a lost event for the barrier (its member node went with its
// session) dropped out of it: the others need not wait for its leave.
func DoubleBarrier(n int) Checker {
	return Checker{
		Name:      "double-barrier",
		Invariant: fmt.Sprintf("nobody starts before %d entered; nobody leaves before all began to leave", n),
		Check:     func(h History) Result { return checkDoubleBarrier(h, n) },
	}
}

func checkDoubleBarrier(h History, n int) Result {
	var v violations
	ops := Operations(h)
	enters := map[string][]int64{}
	leaves := map[string][]int64{}
	entered := map[string]map[string]bool{}
	lost := map[string]map[string]bool{}
	for _, e := range h.Events {
		if e.Kind == KindLost {
			if lost[e.Key] == nil {
				lost[e.Key] = map[string]bool{}
			}
			lost[e.Key][e.Client] = true
		}
	}
	for _, o := range ops {
		switch o.Fn {
		case FnEnter:
			enters[o.Key] = append(enters[o.Key], o.Call)
			if o.Result == KindOK && !lost[o.Key][o.Client] {
				if entered[o.Key] == nil {
					entered[o.Key] = map[string]bool{}
				}
				entered[o.Key][o.Client] = true
			}
		case FnLeave:
			if !lost[o.Key][o.Client] {
				leaves[o.Key] = append(leaves[o.Key], o.Call)
			}
		}
	}
	checked := 0
	for _, o := range ops {
		if o.Result != KindOK {
			continue
		}
		switch o.Fn {
		case FnEnter:
			checked++
			calls := append([]int64(nil), enters[o.Key]...)
			sort.Slice(calls, func(i, j int) bool { return calls[i] < calls[j] })
			if len(calls) < n {
				v.add(o.Return, o.Client, "%s entered %s with only %d of %d members arriving", o.Client, o.Key, len(calls), n)
			} else if o.Return < calls[n-1] {
				v.add(o.Return, o.Client, "%s entered %s at %s, before the %d-th member arrived at %s", o.Client, o.Key, rel(h, o.Return), n, rel(h, calls[n-1]))
			}
		case FnLeave:
			if lost[o.Key][o.Client] {
				continue
			}
			checked++
			calls := leaves[o.Key]
			if len(calls) < len(entered[o.Key]) {
				v.add(o.Return, o.Client, "%s left %s while only %d of %d members began to leave", o.Client, o.Key, len(calls), len(entered[o.Key]))
				continue
			}
			for _, c := range calls {
				if o.Return < c {
					v.add(o.Return, o.Client, "%s left %s at %s, before another member began to leave at %s", o.Client, o.Key, rel(h, o.Return), rel(h, c))
					break
				}
			}
		}
	}
	return v.result(checked)
}
