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
