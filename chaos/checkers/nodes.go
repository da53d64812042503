package checkers

import "github.com/zkrecipes/zkrecipes/chaos/history"

// NoNodesLeft proves that no node was left behind: every nodes-left event
// (recorded by the runner right after every client closed, by workloads
// once they quiesced, and by workloads' audits of their persistent litter:
// queue items and claims after the drain, finished double-barrier rounds,
// two-phase transactions after Collect) found zero nodes. A listing that
// failed (Value -1) is a violation too: it proves nothing.
func NoNodesLeft() Checker {
	return Checker{
		Name:      "no-nodes-left",
		Invariant: "no node is left behind once every client closed (and each recipe's persistent litter is cleaned)",
		Check:     checkNodes,
	}
}

func checkNodes(h history.History) Result {
	var v violations
	checked := 0
	for _, e := range h.Events {
		if e.Kind != history.KindNodesLeft {
			continue
		}
		checked++
		switch {
		case e.Value < 0:
			v.add(e.Time, e.Client, "could not list the nodes left: %s", e.Detail)
		case e.Value > 0:
			v.add(e.Time, e.Client, "%d node(s) left behind: %s", e.Value, e.Detail)
		}
	}
	return v.result(checked)
}
