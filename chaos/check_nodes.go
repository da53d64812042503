package chaos

// NoNodesLeft proves that no node was left behind: every nodes-left event
// (recorded by the runner after every client closed, and by workloads once
// they quiesced) found zero nodes.
func NoNodesLeft() Checker {
	return Checker{
		Name:      "no-nodes-left",
		Invariant: "no node is left behind once every client closed",
		Check:     checkNodes,
	}
}

func checkNodes(h History) Result {
	var v violations
	checked := 0
	for _, e := range h.Events {
		if e.Kind != KindNodesLeft {
			continue
		}
		checked++
		if e.Value > 0 {
			v.add(e.Time, e.Client, "%d node(s) left behind: %s", e.Value, e.Detail)
		}
	}
	return v.result(checked)
}
