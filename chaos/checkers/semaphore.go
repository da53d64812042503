package checkers

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// SemaphoreMax proves that a semaphore whose maximum changes at run time
// never has more holders than the maximum in force: the holders of a key at
// any instant number at most the maximum that the last of them to be
// granted may have read.
//
// What the history holds: each lease as a holding of the semaphore's key
// (acquired to released or lost), each acquisition's start as an invoke of
// history.FnAcquire by the same client on the same key, and each change of
// the maximum as an operation history.FnSetMax on the key with the new
// value as Arg (ok, or unknown when its answer was lost; a failed one
// changed nothing), the initial value included. A holding without an
// acquire invoke is taken to have begun at the history's start; a key
// without any change of its maximum is not bounded (the note says so).
//
// Why it is sound, for a semaphore that grants a lease only after listing
// the leases and then reading the maximum (lock.Semaphore, Curator's
// InterProcessSemaphoreV2): a value v may have been read by an acquisition
// called at g and granted at r (its acquired event) only if v's change was
// called before r and the first change certainly applied after v's (an ok
// one, called after v's returned, or a later one of the same client)
// returned after g: the maximum M of an acquisition is the largest such v.
// Grants are serialised (by the semaphore's mutex), so among the holders S
// at an instant, the last one granted saw every other's lease at its
// listing, and so counted at least |S| leases, no more than the value it
// read. It is one of the holders j that no other k proves granted later
// (k's acquisition called after j's returned), so |S| must not exceed the
// largest M of those. A holder beyond a maximum lowered after it was
// granted is no violation (nobody is revoked); a new grant while the
// holders are at or above the lowered maximum is.
func SemaphoreMax() Checker {
	return Checker{
		Name:      "semaphore-max",
		Invariant: "never more holders of a semaphore than the maximum in force (the largest the last holder granted may have read)",
		Check:     checkSemaphoreMax,
	}
}

// maxChange is one change of a key's maximum: possibly in force from from
// to until.
type maxChange struct {
	value       int64
	from, until int64
}

// maxChanges returns, per key, the changes of its maximum with the window
// in which each value may have been read.
func maxChanges(h history.History) map[string][]maxChange {
	byKey := map[string][]history.Operation{}
	for _, o := range history.Operations(h) {
		if o.Fn == history.FnSetMax && o.Result != history.KindFail {
			byKey[o.Key] = append(byKey[o.Key], o)
		}
	}
	out := map[string][]maxChange{}
	for key, ops := range byKey {
		for _, k := range ops {
			until := int64(math.MaxInt64)
			for _, j := range ops {
				if j.Result != history.KindOK || j.Call <= k.Call {
					continue
				}
				if j.Call > k.Return || j.Client == k.Client {
					until = min(until, j.Return)
				}
			}
			out[key] = append(out[key], maxChange{value: k.Arg, from: k.Call, until: until})
		}
	}
	return out
}

// acquireStarts returns, per client and key, the times of the acquire
// invokes, in order.
func acquireStarts(h history.History) map[[2]string][]int64 {
	out := map[[2]string][]int64{}
	for _, e := range h.Events {
		if e.Kind == history.KindInvoke && e.Fn == history.FnAcquire {
			k := [2]string{e.Client, e.Key}
			out[k] = append(out[k], e.Time)
		}
	}
	return out
}

func checkSemaphoreMax(h history.History) Result {
	var v violations
	all := history.Holdings(h)
	changes := maxChanges(h)
	starts := acquireStarts(h)
	var unbounded []string
	for key, hs := range byKey(all) {
		cs := changes[key]
		if len(cs) == 0 {
			unbounded = append(unbounded, key)
			continue
		}
		// called[i] is when holding i's acquisition began; bound[i] the
		// largest maximum it may have read.
		called := make([]int64, len(hs))
		bound := make([]int64, len(hs))
		for i, x := range hs {
			called[i] = h.Start
			ts := starts[[2]string{x.Client, key}]
			if j := sort.Search(len(ts), func(j int) bool { return ts[j] > x.From }); j > 0 {
				called[i] = ts[j-1]
			}
			bound[i] = math.MinInt64
			for _, c := range cs {
				if c.from <= x.From && c.until >= called[i] {
					bound[i] = max(bound[i], c.value)
				}
			}
		}
		held := map[int]bool{}
		bad := false // the holders were already too many before this edge
		for _, e := range sweep(hs) {
			if e.start {
				held[e.i] = true
			} else {
				delete(held, e.i)
			}
			if len(held) == 0 {
				bad = false
				continue
			}
			// The last granted is one no other holder was granted after.
			latest := int64(math.MinInt64)
			for i := range held {
				latest = max(latest, called[i])
			}
			limit := int64(math.MinInt64)
			for i := range held {
				if hs[i].From >= latest {
					limit = max(limit, bound[i])
				}
			}
			if int64(len(held)) <= limit {
				bad = false
				continue
			}
			if bad && !e.start {
				continue // the same excess, one holder fewer: reported already
			}
			bad = true
			var who []string
			for i := range held {
				who = append(who, fmt.Sprintf("%s(from %s, called %s, max read at most %s)",
					hs[i].Client, history.Rel(h, hs[i].From), history.Rel(h, called[i]), maxText(bound[i])))
			}
			sort.Strings(who)
			v.add(e.t, hs[e.i].Client, "%d holders of %s at %s, above the maximum in force (%s): %s",
				len(held), key, history.Rel(h, e.t), maxText(limit), strings.Join(who, ", "))
		}
	}
	r := v.result(len(all))
	if len(unbounded) > 0 {
		sort.Strings(unbounded)
		note := "no maximum recorded for " + strings.Join(unbounded, ", ")
		if r.Note != "" {
			note = r.Note + "; " + note
		}
		r.Note = note
	}
	return r
}

// maxText formats a maximum; none may have been read before the first
// change was called.
func maxText(m int64) string {
	if m == math.MinInt64 {
		return "none yet"
	}
	return fmt.Sprint(m)
}
