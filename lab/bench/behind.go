package bench

import (
	"fmt"
	"slices"
	"strings"
)

// costNotes says, per workload, what zkrecipes pays on that row that a
// peer may not: a floor no client can go under, or a safety check the
// peer skips. Keys are workload names without a trailing "-N" count
// (workloadKind). Behind prints the note of every row a peer won.
var costNotes = map[string]string{
	"uncontended": "the floor: an acquire is a create (a write) and a listing pipelined behind it, a release a delete " +
		"(a write), so 2 write round trips plus a read's service time; every peer sends the same 3 requests",
	"contended": "5 requests and 2 listings per handoff, as every peer: a woken waiter lists once rather than probing " +
		"each departed node (the floor of 4 would need the releaser to name its successor)",
	"leader-resign": "the new leader's owner check and term watch, one getData on its own node " +
		"(recipes.Holding.Check), which stops CURATOR-696's double leader after a reconnect",
	"leader-expiry": "the new leader's owner check and term watch, one getData on its own node " +
		"(recipes.Holding.Check), which stops CURATOR-696's double leader after a reconnect",
	"treecache-changes": "every change read and delivered as an event of its own (see treecache-events): the cache's " +
		"reads share the servers with the writer, so a cache that coalesces changes and reads less lets the writer go faster",
	"queue-take": "strict FIFO: takes are linearizable and keep each producer's order, so every consumer tries " +
		"the oldest item and all but one lose the delete; queue-take-K-spread (queue.WithSpread) gives up that order",
}

// workloadKind strips a workload's trailing consumer or contender count:
// "queue-take-4" is "queue-take", "contended-32" is "contended".
func workloadKind(w string) string {
	if i := strings.LastIndexByte(w, '-'); i > 0 && strings.Trim(w[i+1:], "0123456789") == "" && i+1 < len(w) {
		return w[:i]
	}
	return w
}

// Behind lists, one line each, the rows of the run where a peer was
// faster than zkrecipes (Speed above 1), in the order of the results, but
// the round-trip row (the floor, a raw request: no recipe),
// each with what zkrecipes pays there (costNotes) or "not explained".
// ComputeSpeeds must have run.
func (rep *Report) Behind() []string {
	var out []string
	for _, r := range rep.Results {
		if r.Impl == ImplZkrecipes || r.Err != "" || r.Speed <= 1 || r.Workload == WRoundTrip {
			continue
		}
		note, ok := costNotes[r.Workload]
		if !ok {
			note, ok = costNotes[workloadKind(r.Workload)]
		}
		if !ok {
			note = "not explained"
		}
		line := fmt.Sprintf("%s: %s %.2fx faster (%s); zkrecipes pays: %s", r.Workload, r.Impl, r.Speed, r.figure(), note)
		if !slices.Contains(out, line) {
			out = append(out, line)
		}
	}
	return out
}
