package chaos

import (
	"fmt"
	"strings"
	"time"
)

// Trace is the kind of mark a fault must leave in the history to count as
// exercised.
type Trace string

const (
	// TraceTarget: the fault's target client went through something: a
	// suspension or a new session (KindSession), a lost holding, a request
	// that failed for the fault or whose outcome is unknown, a fenced write
	// rejected, or a holding it had when the fault struck that it did not
	// release itself.
	TraceTarget Trace = "target"
	// TraceDisruption: any workload client went through one of those, or
	// the ZooKeeper leader changed across the window.
	TraceDisruption Trace = "disruption"
	// TraceTraffic: a workload client completed something during the
	// window (slow links need not disrupt; they must carry traffic), or
	// went through one of the disruptions above (a link slow enough to
	// suspend a client was not idle either).
	TraceTraffic Trace = "traffic"
)

// Exercised proves that every fault window left its trace (see Fault.Trace)
// between its start and a grace after its heal (the client may learn of
// an expiry only on reconnecting). A fault that left none tested nothing:
// the scenario is "not exercised", flagged (inconclusive) in the quick tier
// and a violation in the full tier, as Throughput does. Windows whose fault
// was not injected are skipped (the scenario fails for that already).
func Exercised(grace time.Duration, tier Tier) Checker {
	return Checker{
		Name:      "exercised",
		Invariant: "every fault left a trace in the history: a suspension, expiry, loss, failed request, handoff or leader change, as fits the fault",
		Check:     func(h History) Result { return checkExercised(h, grace, tier) },
	}
}

// faultWindow is one injected fault of a history.
type faultWindow struct {
	fault      string
	start, end int64
	target     *Target
}

// faultWindows returns the injected windows of h, in order.
func faultWindows(h History) []faultWindow {
	var out []faultWindow
	open := map[string]int{}
	for _, e := range h.Events {
		switch e.Kind {
		case KindFaultStart:
			open[e.Key] = len(out)
			out = append(out, faultWindow{fault: e.Key, start: e.Time, end: -1})
		case KindFaultTarget:
			if i, ok := open[e.Key]; ok {
				for _, t := range Targets(History{Events: []Event{e}}) {
					out[i].target = &t
				}
			}
		case KindFaultEnd:
			i, ok := open[e.Key]
			if !ok {
				continue
			}
			delete(open, e.Key)
			if strings.HasPrefix(e.Detail, "not injected") {
				out[i].end = -2
				continue
			}
			out[i].end = e.Time
		}
	}
	kept := out[:0]
	for _, w := range out {
		if w.end == -1 { // never healed: runs to the end
			w.end = h.End
		}
		if w.end >= 0 {
			kept = append(kept, w)
		}
	}
	return kept
}

// disruptive reports whether e shows a client going through a fault.
func disruptive(e Event) bool {
	switch e.Kind {
	case KindLost, KindUnknown, KindFencedRejected:
		return true
	case KindFail: // contention (a bad version) is no fault's mark
		return !strings.Contains(strings.ToLower(e.Detail), "version")
	case KindSession:
		return e.Detail != "connected"
	}
	return false
}

// traced returns what shows that w left its trace in h, or "".
func traced(h History, w faultWindow, trace Trace, grace time.Duration) string {
	until := w.end + int64(grace)
	// Traffic counts while the fault is on, and after the heal only for
	// an operation a client invoked while it was on (slowed by it, done
	// just after it).
	invokedIn := map[string]bool{}
	target := ""
	if w.target != nil {
		target = w.target.Client
	}
	if trace == TraceTarget && target == "" {
		trace = TraceDisruption
	}
	var before, after int64 = -2, -2 // ZooKeeper leader seen before the fault and after its heal
	for _, e := range h.Events {
		if e.Kind == KindZKLeader {
			if e.Time <= w.start {
				before = e.Value
			} else if e.Time >= w.end && after == -2 {
				after = e.Value
			}
			continue
		}
		if e.Time < w.start || e.Time > until || !workloadClient(e.Client) {
			continue
		}
		switch trace {
		case TraceTraffic:
			if disruptive(e) {
				return fmt.Sprintf("%s %s %s at %s", e.Client, e.Kind, e.Detail, rel(h, e.Time))
			}
			if e.Kind == KindInvoke && e.Time <= w.end {
				invokedIn[e.Client] = true
			}
			if (IsProgress(e) || e.Kind == KindFail || e.Kind == KindUnknown) && (e.Time <= w.end || invokedIn[e.Client]) {
				return fmt.Sprintf("%s %s at %s", e.Client, e.Kind, rel(h, e.Time))
			}
		case TraceTarget:
			if e.Client == target && disruptive(e) {
				return fmt.Sprintf("%s %s %s at %s", e.Client, e.Kind, e.Detail, rel(h, e.Time))
			}
		default:
			if disruptive(e) {
				return fmt.Sprintf("%s %s %s at %s", e.Client, e.Kind, e.Detail, rel(h, e.Time))
			}
		}
	}
	if trace == TraceTarget {
		for _, hd := range Holdings(h) {
			if hd.Client == target && hd.From <= w.start && hd.To > w.start && hd.Ended != KindReleased {
				return fmt.Sprintf("%s's holding from %s not released by it", target, rel(h, hd.From))
			}
		}
	}
	if trace == TraceDisruption && before != -2 && after != -2 && before != after {
		return fmt.Sprintf("ZooKeeper leader %d, then %d", before, after)
	}
	return ""
}

func checkExercised(h History, grace time.Duration, tier Tier) Result {
	ws := faultWindows(h)
	r := Result{Checked: len(ws)}
	var missing, found []string
	var at int64
	for _, w := range ws {
		trace := TraceDisruption
		if f, err := FaultByName(w.fault); err == nil && f.Trace != "" {
			trace = f.Trace
		}
		if mark := traced(h, w, trace, grace); mark != "" {
			found = append(found, w.fault+": "+mark)
			continue
		}
		on := ""
		if w.target != nil {
			on = " on " + w.target.String()
		}
		missing = append(missing, fmt.Sprintf("%s at %s%s left no %s trace", w.fault, rel(h, w.start), on, trace))
		if at == 0 {
			at = w.start
		}
	}
	if len(missing) == 0 {
		if len(found) > 0 {
			r.Note = "traces: " + strings.Join(found, "; ")
		}
		return r
	}
	msg := "not exercised: " + strings.Join(missing, "; ")
	if tier == TierFull {
		r.Violations = []Violation{{Time: at, Msg: msg}}
		return r
	}
	r.Inconclusive, r.Note = true, msg
	return r
}
