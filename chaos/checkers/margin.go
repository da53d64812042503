package checkers

import (
	"fmt"
	"sort"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// Margin is one handoff after a loss: the old holder's loss signal (its
// holding's context done, recorded as history.KindLost) and the next
// conflicting acquisition of the same key by another client, on one
// monotonic clock.
type Margin struct {
	Key       string        `json:"key"`
	Lost      string        `json:"lost"`     // the old holder
	Acquirer  string        `json:"acquirer"` // the new holder
	LostAt    int64         `json:"lost_at"`
	Acquired  int64         `json:"acquired_at"`
	Margin    time.Duration `json:"margin"` // Acquired - LostAt
	LostToken int64         `json:"lost_token"`
}

// conflicts reports whether holdings in modes a and b exclude each other:
// only two reads may overlap.
func conflicts(a, b string) bool { return a != "read" || b != "read" }

// LeaseMargins returns the margin of every handoff that follows a lost
// holding in h: for each holding that ended lost, the first holding of the
// same key by another client, in a conflicting mode, acquired after the
// lost one began. A negative margin is an overlap.
func LeaseMargins(h history.History) []Margin {
	hs := history.Holdings(h)
	var out []Margin
	for i, l := range hs {
		if l.Ended != history.KindLost {
			continue
		}
		for _, n := range hs[i+1:] {
			if n.Key != l.Key || n.Client == l.Client || !conflicts(l.Mode, n.Mode) || n.From < l.From {
				continue
			}
			out = append(out, Margin{Key: l.Key, Lost: l.Client, Acquirer: n.Client, LostAt: l.To, Acquired: n.From,
				Margin: time.Duration(n.From - l.To), LostToken: l.Token})
			break
		}
	}
	return out
}

// MarginStats returns the number of margins, their minimum and median.
func MarginStats(ms []Margin) (n int, minimum, median time.Duration) {
	if len(ms) == 0 {
		return 0, 0, 0
	}
	ds := make([]time.Duration, len(ms))
	for i, m := range ms {
		ds[i] = m.Margin
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return len(ds), ds[0], ds[len(ds)/2]
}

// LeaseMarginName is the name of LeaseMargin's check.
const LeaseMarginName = "lease-margin"

// LeaseMargin proves, for recipes under the default loss policy
// (StepDownOnSuspend), that every handoff after a loss has a positive
// margin: the old holder learnt of its loss (its holding's context was
// done) strictly before the new holder acquired. Zero or less means the
// two believed they held at once, or at the same instant.
func LeaseMargin() Checker {
	return Checker{
		Name:      LeaseMarginName,
		Invariant: "every handoff after a loss: the old holder's loss signal strictly precedes the new holder's acquisition",
		Check:     checkLeaseMargin,
	}
}

func checkLeaseMargin(h history.History) Result {
	ms := LeaseMargins(h)
	var v violations
	for _, m := range ms {
		if m.Margin <= 0 {
			v.add(m.Acquired, m.Acquirer, "%s acquired %s %v after %s's loss signal (token %d) at %s: margin must be positive",
				m.Acquirer, m.Key, m.Margin, m.Lost, m.LostToken, history.Rel(h, m.LostAt))
		}
	}
	r := v.result(len(ms))
	if n, lo, med := MarginStats(ms); n > 0 && r.Note == "" {
		r.Note = fmt.Sprintf("%d handoff(s) after a loss: margin min %v, median %v", n, lo.Round(time.Millisecond), med.Round(time.Millisecond))
	}
	return r
}

// Exclusive reports whether a workload checks exclusion of one holder
// (lock, leader, rwlock writers): its handoffs have a lease margin.
func Exclusive(cs []Checker) bool {
	for _, c := range cs {
		switch c.Name {
		case "mutual-exclusion", "single-leader", "writer-exclusive":
			return true
		}
	}
	return false
}
