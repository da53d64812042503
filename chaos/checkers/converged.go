package checkers

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// Converged proves that a workload whose clients share out a set of keys
// (a set partitioner's items) converged after its faults: at some instant
// within bound of the last heal (of the history's start when no fault was
// healed), every one of keys was held at once, each by some client. A
// bound that reaches past the end of the history must still be met in what
// was recorded. Holdings are half-open, as for MutualExclusion: a key
// released and acquired at one instant is held at that instant by the
// acquirer only. Only workload clients' holdings count.
func Converged(keys []string, bound time.Duration) Checker {
	return Checker{
		Name:      "converged",
		Invariant: fmt.Sprintf("all %d items owned at one instant within %v of the last heal", len(keys), bound),
		Check:     func(h history.History) Result { return checkConverged(h, keys, bound) },
	}
}

func checkConverged(h history.History, keys []string, bound time.Duration) Result {
	var v violations
	from, healed := h.Start, false
	for _, e := range h.Events {
		if history.Healed(e) && e.Time >= from {
			from, healed = e.Time, true
		}
	}
	deadline := min(from+int64(bound), h.End)
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	var hs []history.Holding
	for _, x := range history.Holdings(h) {
		if want[x.Key] && workloadClient(x.Client) && x.To > x.From {
			hs = append(hs, x)
		}
	}
	held := map[string]int{}  // key -> holders now
	seen := map[string]bool{} // keys held at some instant in [from, deadline]
	best, bestAt := -1, from
	check := func(t int64) bool {
		n := 0
		for _, k := range keys {
			if held[k] > 0 {
				n++
				seen[k] = true
			}
		}
		if n > best {
			best, bestAt = n, t
		}
		return n == len(keys)
	}
	es := sweep(hs)
	i := 0
	apply := func(e edge) {
		if e.start {
			held[hs[e.i].Key]++
		} else {
			held[hs[e.i].Key]--
		}
	}
	for ; i < len(es) && es[i].t <= from; i++ {
		apply(es[i])
	}
	done := check(from)
	for !done && i < len(es) && es[i].t <= deadline {
		t := es[i].t
		for ; i < len(es) && es[i].t == t; i++ {
			apply(es[i])
		}
		done = check(t)
	}
	if !done {
		after := "the start"
		if healed {
			after = "the last heal"
		}
		var never []string
		for _, k := range keys {
			if !seen[k] {
				never = append(never, k)
			}
		}
		sort.Strings(never)
		msg := fmt.Sprintf("not converged within %v of %s at %s: at most %d of %d items owned at once (at %s)",
			time.Duration(deadline-from).Round(time.Millisecond), after, history.Rel(h, from), max(best, 0), len(keys), history.Rel(h, bestAt))
		if len(never) > 0 {
			msg += "; never owned: " + strings.Join(never, ", ")
		}
		v.add(deadline, "", "%s", msg)
	}
	return v.result(len(keys))
}
