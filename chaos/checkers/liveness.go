package checkers

import (
	"fmt"
	"sort"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// Liveness proves that the workload makes progress (history.IsProgress: an
// operation succeeds, a holding is acquired, a fenced write is accepted):
// some client within bound of the history's start, and every client within
// bound of every heal (history.Healed: the end of a fault that was not
// injected healed nothing, and the scenario fails for that already). A
// client is expected after a heal when it recorded anything before it; a
// client that has not progressed when the next fault window starts,
// before the bound, is under that fault and excused for this heal. A
// bound reaching past the end of the history must still be met in what
// was recorded.
func Liveness(bound time.Duration) Checker {
	return Checker{
		Name:      "liveness",
		Invariant: fmt.Sprintf("progress within %v of the start, and by every client not under a fault within %v of every heal", bound, bound),
		Check:     func(h history.History) Result { return checkLiveness(h, bound) },
	}
}

// workloadClient is history.IsWorkloadClient.
func workloadClient(client string) bool { return history.IsWorkloadClient(client) }

func checkLiveness(h history.History, bound time.Duration) Result {
	var v violations
	var all []int64
	progress := map[string][]int64{}
	first := map[string]int64{}
	var heals []history.Event
	var starts []int64
	for _, e := range h.Events {
		if workloadClient(e.Client) {
			if _, ok := first[e.Client]; !ok {
				first[e.Client] = e.Time
			}
			if history.IsProgress(e) {
				all = append(all, e.Time)
				progress[e.Client] = append(progress[e.Client], e.Time)
			}
		}
		switch {
		case history.Healed(e):
			heals = append(heals, e)
		case e.Kind == history.KindFaultStart:
			starts = append(starts, e.Time)
		}
	}
	// next returns the first time in ts at or after t, or -1.
	next := func(ts []int64, t int64) int64 {
		i := sort.Search(len(ts), func(i int) bool { return ts[i] >= t })
		if i == len(ts) {
			return -1
		}
		return ts[i]
	}
	late := func(p, t int64) string {
		if p < 0 {
			return "none since"
		}
		return "first after " + time.Duration(p-t).Round(time.Millisecond).String()
	}
	checked := 1
	if p := next(all, h.Start); p < 0 || p > h.Start+int64(bound) {
		v.add(h.Start, "", "no progress within %v of the start (%s)", bound, late(p, h.Start))
	}
	clients := make([]string, 0, len(first))
	for c := range first {
		clients = append(clients, c)
	}
	sort.Strings(clients)
	for _, heal := range heals {
		t := heal.Time
		deadline := t + int64(bound)
		excusedFrom := int64(-1) // the next fault's start, when before the deadline
		if s := next(starts, t+1); s >= 0 && s < deadline {
			excusedFrom = s
		}
		for _, c := range clients {
			if first[c] >= t {
				continue
			}
			checked++
			p := next(progress[c], t)
			switch {
			case p >= 0 && p <= deadline && (excusedFrom < 0 || p <= excusedFrom):
			case excusedFrom >= 0 && (p < 0 || p > excusedFrom):
				// under the next fault before it progressed
			default:
				v.add(t, c, "%s made no progress within %v of the heal of %s at %s (%s)", c, bound, heal.Key, history.Rel(h, t), late(p, t))
			}
		}
	}
	return v.result(checked)
}
