package checkers

import (
	"fmt"
	"strings"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/faults"
	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// Exercised proves that every fault window left its trace (see
// faults.Fault.Trace) between its start and a grace after its heal (the
// client may learn of an expiry only on reconnecting). A fault that left none tested nothing:
// the scenario is "not exercised", flagged (inconclusive) in the quick tier
// and a violation in the full tier, as Throughput does. Windows whose fault
// was not injected are skipped (the scenario fails for that already).
//
// A workload that aims a step of its own at a fault (history.KindAim,
// recorded at its start, its Key the fault's name: a cache's nodes deleted
// and created again while the cache is cut off) must also have done it
// inside every window of that fault: a history.KindAimHit between the
// window's start and its heal. A window without one tested nothing either,
// whatever trace the fault left. A fault the workload aims nothing at (a
// mild fault, under which a mutant must pass: there is no cut to aim at
// under latency) needs its trace only.
func Exercised(grace time.Duration, tier faults.Tier) Checker {
	return Checker{
		Name:      "exercised",
		Invariant: "every fault left a trace in the history: a suspension, expiry, loss, failed request, handoff or leader change, as fits the fault; and the workload's aimed step, if it has one, happened inside every fault",
		Check:     func(h history.History) Result { return checkExercised(h, grace, tier) },
	}
}

// FaultWindow is one injected fault of a history: its fault's name, its
// start and heal (history clock) and the target it struck, if recorded.
type FaultWindow struct {
	Fault      string
	Start, End int64
	Target     *faults.Target
}

// FaultWindows returns the injected windows of h, in order.
func FaultWindows(h history.History) []FaultWindow {
	var out []FaultWindow
	open := map[string]int{}
	for _, e := range h.Events {
		switch e.Kind {
		case history.KindFaultStart:
			open[e.Key] = len(out)
			out = append(out, FaultWindow{Fault: e.Key, Start: e.Time, End: -1})
		case history.KindFaultTarget:
			if i, ok := open[e.Key]; ok {
				for _, t := range faults.Targets(history.History{Events: []history.Event{e}}) {
					out[i].Target = &t
				}
			}
		case history.KindFaultEnd:
			i, ok := open[e.Key]
			if !ok {
				continue
			}
			delete(open, e.Key)
			if !history.Healed(e) {
				out[i].End = -2
				continue
			}
			out[i].End = e.Time
		}
	}
	kept := out[:0]
	for _, w := range out {
		if w.End == -1 { // never healed: runs to the end
			w.End = h.End
		}
		if w.End >= 0 {
			kept = append(kept, w)
		}
	}
	return kept
}

// disruptive reports whether e shows a client going through a fault.
func disruptive(e history.Event) bool {
	switch e.Kind {
	case history.KindLost, history.KindUnknown, history.KindFencedRejected:
		return true
	case history.KindFail: // contention (a bad version) is no fault's mark
		return !strings.Contains(strings.ToLower(e.Detail), "version")
	case history.KindSession:
		return e.Detail != "connected"
	}
	return false
}

// traced returns what shows that w left its trace in h, or "".
func traced(h history.History, w FaultWindow, trace faults.Trace, grace time.Duration) string {
	until := w.End + int64(grace)
	// Traffic counts while the fault is on, and after the heal only for
	// an operation a client invoked while it was on (slowed by it, done
	// just after it).
	invokedIn := map[string]bool{}
	target := ""
	if w.Target != nil {
		target = w.Target.Client
	}
	if trace == faults.TraceTarget && target == "" {
		trace = faults.TraceDisruption
	}
	var before, after int64 = -2, -2 // ZooKeeper leader seen before the fault and after its heal
	for _, e := range h.Events {
		if e.Kind == history.KindZKLeader {
			if e.Time <= w.Start {
				before = e.Value
			} else if e.Time >= w.End && after == -2 {
				after = e.Value
			}
			continue
		}
		if e.Time < w.Start || e.Time > until || !workloadClient(e.Client) {
			continue
		}
		switch trace {
		case faults.TraceTraffic:
			if disruptive(e) {
				return fmt.Sprintf("%s %s %s at %s", e.Client, e.Kind, e.Detail, history.Rel(h, e.Time))
			}
			if e.Kind == history.KindInvoke && e.Time <= w.End {
				invokedIn[e.Client] = true
			}
			if (history.IsProgress(e) || e.Kind == history.KindFail || e.Kind == history.KindUnknown) && (e.Time <= w.End || invokedIn[e.Client]) {
				return fmt.Sprintf("%s %s at %s", e.Client, e.Kind, history.Rel(h, e.Time))
			}
		case faults.TraceTarget:
			if e.Client == target && disruptive(e) {
				return fmt.Sprintf("%s %s %s at %s", e.Client, e.Kind, e.Detail, history.Rel(h, e.Time))
			}
		default:
			if disruptive(e) {
				return fmt.Sprintf("%s %s %s at %s", e.Client, e.Kind, e.Detail, history.Rel(h, e.Time))
			}
		}
	}
	if trace == faults.TraceTarget {
		for _, hd := range history.Holdings(h) {
			if hd.Client == target && hd.From <= w.Start && hd.To > w.Start && hd.Ended != history.KindReleased {
				return fmt.Sprintf("%s's holding from %s not released by it", target, history.Rel(h, hd.From))
			}
		}
	}
	if trace == faults.TraceDisruption && before != -2 && after != -2 && before != after {
		return fmt.Sprintf("ZooKeeper leader %d, then %d", before, after)
	}
	return ""
}

// modesAtHeal returns what the servers w cut off answered srvr right
// before its heal (history.KindServerMode), as " (at the heal: server 0
// follower)", or "": a cut server that still led or followed never left
// the quorum, which says why its clients saw nothing.
func modesAtHeal(h history.History, w FaultWindow) string {
	var ms []string
	for _, e := range h.Events {
		if e.Kind == history.KindServerMode && e.Time >= w.Start && e.Time <= w.End {
			ms = append(ms, fmt.Sprintf("server %d %s", e.Value, e.Detail))
		}
	}
	if len(ms) == 0 {
		return ""
	}
	return " (at the heal: " + strings.Join(ms, ", ") + ")"
}

// aims returns the steps the workload of h aims at its faults (its
// history.KindAim events: fault name to step; the key "" for an aim at
// every fault), and its hits.
func aims(h history.History) (steps map[string]string, hits []history.Event) {
	steps = map[string]string{}
	for _, e := range h.Events {
		switch e.Kind {
		case history.KindAim:
			steps[e.Key] = e.Detail
		case history.KindAimHit:
			hits = append(hits, e)
		}
	}
	return steps, hits
}

// aimedAt returns the step aimed at fault, or "".
func aimedAt(steps map[string]string, fault string) string {
	if step, ok := steps[fault]; ok {
		return step
	}
	return steps[""]
}

// hitIn returns what shows that the aimed step happened inside w, or "".
func hitIn(h history.History, w FaultWindow, hits []history.Event) string {
	for _, e := range hits {
		if e.Time >= w.Start && e.Time <= w.End {
			return fmt.Sprintf("%s %s at %s", e.Client, e.Detail, history.Rel(h, e.Time))
		}
	}
	return ""
}

func checkExercised(h history.History, grace time.Duration, tier faults.Tier) Result {
	ws := FaultWindows(h)
	r := Result{Checked: len(ws)}
	var missing, found []string
	var at int64
	steps, hits := aims(h)
	for _, w := range ws {
		if step := aimedAt(steps, w.Fault); step != "" {
			if mark := hitIn(h, w, hits); mark != "" {
				found = append(found, w.Fault+" aimed: "+mark)
			} else {
				missing = append(missing, fmt.Sprintf("%s at %s: the workload's aimed step (%s) did not happen inside it", w.Fault, history.Rel(h, w.Start), step))
				if at == 0 {
					at = w.Start
				}
			}
		}
		trace := faults.TraceDisruption
		if f, err := faults.ByName(w.Fault); err == nil && f.Trace != "" {
			trace = f.Trace
		}
		if mark := traced(h, w, trace, grace); mark != "" {
			found = append(found, w.Fault+": "+mark)
			continue
		}
		on := ""
		if w.Target != nil {
			on = " on " + w.Target.String()
		}
		missing = append(missing, fmt.Sprintf("%s at %s%s left no %s trace%s", w.Fault, history.Rel(h, w.Start), on, trace, modesAtHeal(h, w)))
		if at == 0 {
			at = w.Start
		}
	}
	if len(missing) == 0 {
		if len(found) > 0 {
			r.Note = "traces: " + strings.Join(found, "; ")
		}
		return r
	}
	msg := "not exercised: " + strings.Join(missing, "; ")
	if tier == faults.TierFull {
		r.Violations = []Violation{{Time: at, Msg: msg}}
		return r
	}
	r.Inconclusive, r.Note = true, msg
	return r
}
