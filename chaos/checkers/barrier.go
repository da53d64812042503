package checkers

import (
	"fmt"
	"sort"

	"github.com/zkrecipes/zkrecipes/chaos/history"
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

func checkBarrier(h history.History) Result {
	var v violations
	ops := history.Operations(h)
	removed := map[string]int64{}
	for _, o := range ops {
		if o.Fn == history.FnRemove {
			if t, ok := removed[o.Key]; !ok || o.Call < t {
				removed[o.Key] = o.Call
			}
		}
	}
	checked := 0
	for _, o := range ops {
		if o.Fn != history.FnWait || o.Result != history.KindOK {
			continue
		}
		checked++
		t, ok := removed[o.Key]
		switch {
		case !ok:
			v.add(o.Return, o.Client, "%s passed barrier %s, which was never removed", o.Client, o.Key)
		case o.Return < t:
			v.add(o.Return, o.Client, "%s passed barrier %s at %s, before its removal began at %s", o.Client, o.Key, history.Rel(h, o.Return), history.Rel(h, t))
		}
	}
	return v.result(checked)
}

// DoubleBarrier proves the double barrier of n members, counting members
// (distinct clients), not Enter calls, so that a member's retries do not
// stand in for the members missing:
//
//   - nobody's enter returns before n distinct members invoked enter;
//   - nobody's leave returns before every other member that entered (an
//     enter that returned ok) has invoked leave or was lost.
//
// A member that recorded a lost event for the barrier (its member node went
// with its session) dropped out of it, but only from the moment of that
// event: a leave that returned earlier still had to wait for it. Workloads
// stamp a lost event with the moment the member's session stopped being
// usable, not the later moment it learnt of the loss.
func DoubleBarrier(n int) Checker {
	return Checker{
		Name:      "double-barrier",
		Invariant: fmt.Sprintf("nobody starts before %d members entered; nobody leaves before every member began to leave or was lost", n),
		Check:     func(h history.History) Result { return checkDoubleBarrier(h, n) },
	}
}

func checkDoubleBarrier(h history.History, n int) Result {
	var v violations
	ops := history.Operations(h)
	type member struct {
		arrived int64 // first enter call
		entered bool  // an enter returned ok
		leaving int64 // first leave call, or -1
		lost    int64 // first lost event, or -1
	}
	barriers := map[string]map[string]*member{}
	get := func(key, client string) *member {
		if barriers[key] == nil {
			barriers[key] = map[string]*member{}
		}
		m := barriers[key][client]
		if m == nil {
			m = &member{arrived: -1, leaving: -1, lost: -1}
			barriers[key][client] = m
		}
		return m
	}
	for _, e := range h.Events {
		if e.Kind == history.KindLost {
			if m := get(e.Key, e.Client); m.lost < 0 {
				m.lost = e.Time
			}
		}
	}
	for _, o := range ops {
		switch o.Fn {
		case history.FnEnter:
			m := get(o.Key, o.Client)
			if m.arrived < 0 || o.Call < m.arrived {
				m.arrived = o.Call
			}
			if o.Result == history.KindOK {
				m.entered = true
			}
		case history.FnLeave:
			if m := get(o.Key, o.Client); m.leaving < 0 || o.Call < m.leaving {
				m.leaving = o.Call
			}
		}
	}
	checked := 0
	for _, o := range ops {
		if o.Result != history.KindOK || (o.Fn != history.FnEnter && o.Fn != history.FnLeave) {
			continue
		}
		checked++
		members := barriers[o.Key]
		if o.Fn == history.FnEnter {
			arrived := 0
			for _, m := range members {
				if m.arrived >= 0 && m.arrived <= o.Return {
					arrived++
				}
			}
			if arrived < n {
				v.add(o.Return, o.Client, "%s entered %s at %s with only %d of %d members arrived", o.Client, o.Key, history.Rel(h, o.Return), arrived, n)
			}
			continue
		}
		names := make([]string, 0, len(members))
		for c := range members {
			names = append(names, c)
		}
		sort.Strings(names)
		for _, c := range names {
			m := members[c]
			if c == o.Client || !m.entered {
				continue
			}
			if (m.leaving >= 0 && m.leaving <= o.Return) || (m.lost >= 0 && m.lost <= o.Return) {
				continue
			}
			when := "never"
			if m.leaving >= 0 {
				when = "at " + history.Rel(h, m.leaving)
			}
			v.add(o.Return, o.Client, "%s left %s at %s, before %s began to leave (%s) or was lost", o.Client, o.Key, history.Rel(h, o.Return), c, when)
			break
		}
	}
	return v.result(checked)
}
