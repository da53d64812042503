package checkers

import (
	"fmt"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/faults"
	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// Throughput proves that a scenario exercised its workload before its
// fault: workload clients recorded at least minRate progress events
// (history.IsProgress) per second from the history's start to the first
// fault window's start (to the end when there is none). A fault that strikes an
// idle workload tests nothing. Below the rate the scenario is "not
// exercised": flagged (inconclusive, with a note) in the quick tier, a
// violation in the full tier.
func Throughput(minRate float64, tier faults.Tier) Checker {
	return Checker{
		Name:      "throughput",
		Invariant: fmt.Sprintf("at least %.1f operations/s before the first fault", minRate),
		Check:     func(h history.History) Result { return checkThroughput(h, minRate, tier) },
	}
}

func checkThroughput(h history.History, minRate float64, tier faults.Tier) Result {
	until := h.End
	for _, e := range h.Events {
		if e.Kind == history.KindFaultStart {
			until = e.Time
			break
		}
	}
	n := 0
	for _, e := range h.Events {
		if e.Time > until {
			break
		}
		if workloadClient(e.Client) && history.IsProgress(e) {
			n++
		}
	}
	span := time.Duration(until - h.Start)
	rate := 0.0
	if span > 0 {
		rate = float64(n) / span.Seconds()
	}
	r := Result{Checked: n}
	if rate >= minRate {
		return r
	}
	msg := fmt.Sprintf("not exercised: %d operations in the %v before the first fault (%.1f/s, want %.1f/s)",
		n, span.Round(time.Millisecond), rate, minRate)
	if tier == faults.TierFull {
		r.Violations = []Violation{{Time: until, Msg: msg}}
		return r
	}
	r.Inconclusive, r.Note = true, msg
	return r
}

// PendingAtFault proves, for a workload paced below any useful rate
// (workloads.Paced: its clients wait for one another by design, so that
// few operations complete before the first fault whatever the load), that
// the first fault found it in the state the workload aims its faults at:
// client had an operation fn pending, invoked before the fault began and
// not yet returned. It stands in for Throughput's rate, under the same
// name: without such an operation the scenario is "not exercised", flagged
// in the quick tier and a violation in the full tier.
func PendingAtFault(client string, fn history.Fn, tier faults.Tier) Checker {
	return Checker{
		Name:      "throughput",
		Invariant: fmt.Sprintf("%s's %s was pending when the first fault began (the workload's pacing)", client, fn),
		Check:     func(h history.History) Result { return checkPendingAtFault(h, client, fn, tier) },
	}
}

func checkPendingAtFault(h history.History, client string, fn history.Fn, tier faults.Tier) Result {
	start, struck := int64(0), false
	for _, e := range h.Events {
		if e.Kind == history.KindFaultStart {
			start, struck = e.Time, true
			break
		}
	}
	n := 0
	for _, o := range history.Operations(h) {
		if o.Client != client || o.Fn != fn {
			continue
		}
		n++
		if struck && o.Call <= start && o.Return > start {
			return Result{Checked: n, Note: fmt.Sprintf("%s's %s pending from %s at the first fault (%s)", client, fn, history.Rel(h, o.Call), history.Rel(h, start))}
		}
	}
	r := Result{Checked: n}
	msg := fmt.Sprintf("not exercised: no %s of %s was pending when the first fault began (%d %s operations)", fn, client, n, fn)
	if struck {
		msg = fmt.Sprintf("not exercised: no %s of %s was pending when the first fault began at %s (%d %s operations)", fn, client, history.Rel(h, start), n, fn)
	}
	if tier == faults.TierFull {
		r.Violations = []Violation{{Time: start, Msg: msg}}
		return r
	}
	r.Inconclusive, r.Note = true, msg
	return r
}
