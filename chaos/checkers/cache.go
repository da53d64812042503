package checkers

import (
	"fmt"

	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// CacheConverges proves the cache workload's two invariants (see
// workloads.Cache):
//
//   - convergence: every round in quiet time converges. A round is a
//     converge operation (history.FnConverge) of one cache: invoked when
//     the workload had read ZooKeeper's state of the tree directly, with
//     the writers paused; ok once the cache's view equaled it; failed when
//     it still differed after the workload's bound. A failed round is a
//     violation unless a fault window overlaps the round's wait (from its
//     invoke to its failure): the bound covers a reconnection, a new
//     session and a full re-read after a heal, not a fault still on. A
//     round left open by the run's end proves nothing either way.
//   - never back: for each cache and path, every added and updated event
//     (history.KindCacheEvent) carries a larger Mzxid than every earlier
//     one, across removals, reconnections and session losses.
func CacheConverges() Checker {
	return Checker{
		Name:      "cache-converges",
		Invariant: "in quiet time every cache equals ZooKeeper's state of the tree within the workload's bound, and per cache and path the Mzxid it reports only grows",
		Check:     checkCache,
	}
}

func checkCache(h history.History) Result {
	var v violations
	windows := FaultWindows(h)
	checked, excused := 0, 0
	for _, o := range history.Operations(h) {
		if o.Fn != history.FnConverge || o.Result == history.KindUnknown {
			continue
		}
		if o.Result == history.KindOK {
			checked++
			continue
		}
		if overlapsWindow(windows, o.Call, o.Return) {
			excused++
			continue
		}
		checked++
		v.add(o.Return, o.Client, "round %d (read at %s) did not converge: %s", o.Arg, history.Rel(h, o.Call), o.Detail)
	}
	type key struct{ client, path string }
	last := map[key]int64{}
	for _, e := range h.Events {
		if e.Kind != history.KindCacheEvent || (e.Detail != "added" && e.Detail != "updated") {
			continue
		}
		checked++
		k := key{e.Client, e.Key}
		if prev, ok := last[k]; ok && e.Value <= prev {
			v.add(e.Time, e.Client, "%s %s at mzxid 0x%x after 0x%x: the cache went back", e.Key, e.Detail, e.Value, prev)
		}
		last[k] = max(last[k], e.Value)
	}
	r := v.result(checked)
	if excused > 0 && r.Note == "" {
		r.Note = fmt.Sprintf("%d round(s) that overlapped a fault not judged", excused)
	}
	return r
}

// overlapsWindow reports whether a fault window overlaps [from, to].
func overlapsWindow(ws []FaultWindow, from, to int64) bool {
	for _, w := range ws {
		if w.Start <= to && w.End >= from {
			return true
		}
	}
	return false
}
