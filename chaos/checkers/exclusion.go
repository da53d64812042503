package checkers

import (
	"fmt"
	"sort"
	"strings"

	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// MutualExclusion proves that at no instant more than n clients believe
// they hold the same key: holding intervals (acquired to released/lost, on
// one monotonic clock) never overlap more than n deep. With n = 1 it also
// proves that fencing tokens strictly grow from one holder to the next.
// Intervals are half-open: a release and an acquire at the same instant do
// not overlap.
func MutualExclusion(n int) Checker {
	name := "mutual-exclusion"
	if n > 1 {
		name = fmt.Sprintf("semaphore-%d", n)
	}
	return Checker{
		Name:      name,
		Invariant: fmt.Sprintf("at most %d holder(s) of a key at any instant; with one holder, tokens strictly grow", n),
		Check:     func(h history.History) Result { return checkExclusion(h, n) },
	}
}

// SingleLeader proves that at most one participant believes it leads at any
// instant (terms from "campaign returned" to "term context done" never
// overlap) and that terms' fencing tokens strictly grow.
func SingleLeader() Checker {
	return Checker{
		Name:      "single-leader",
		Invariant: "at most one leader at any instant; term tokens strictly grow",
		Check:     func(h history.History) Result { return checkExclusion(h, 1) },
	}
}

// WriterExclusive proves that a holding in mode "write" never overlaps any
// other holding of the same key (read or write); readers may overlap each
// other.
func WriterExclusive() Checker {
	return Checker{
		Name:      "writer-exclusive",
		Invariant: "a writer never overlaps any other holder of the same key",
		Check:     checkWriterExclusive,
	}
}

type edge struct {
	t     int64
	start bool
	i     int
}

// sweep returns the start/end edges of hs, ends before starts at equal times.
func sweep(hs []history.Holding) []edge {
	var es []edge
	for i, x := range hs {
		es = append(es, edge{x.From, true, i}, edge{x.To, false, i})
	}
	sort.SliceStable(es, func(a, b int) bool {
		if es[a].t != es[b].t {
			return es[a].t < es[b].t
		}
		return !es[a].start && es[b].start
	})
	return es
}

func byKey(hs []history.Holding) map[string][]history.Holding {
	m := map[string][]history.Holding{}
	for _, x := range hs {
		m[x.Key] = append(m[x.Key], x)
	}
	return m
}

func checkExclusion(h history.History, n int) Result {
	var v violations
	all := history.Holdings(h)
	for key, hs := range byKey(all) {
		held := map[int]bool{}
		for _, e := range sweep(hs) {
			if !e.start {
				delete(held, e.i)
				continue
			}
			held[e.i] = true
			if len(held) > n {
				var who []string
				for i := range held {
					who = append(who, fmt.Sprintf("%s(token %d, from %s)", hs[i].Client, hs[i].Token, history.Rel(h, hs[i].From)))
				}
				sort.Strings(who)
				v.add(e.t, hs[e.i].Client, "%d holders of %s at %s (max %d): %s", len(held), key, history.Rel(h, e.t), n, strings.Join(who, ", "))
			}
		}
		if n == 1 {
			for i := 1; i < len(hs); i++ {
				a, b := hs[i-1], hs[i]
				if a.Token != 0 && b.Token != 0 && b.Token <= a.Token {
					v.add(b.From, b.Client, "token of %s did not grow: %d after %s's %d", key, b.Token, a.Client, a.Token)
				}
			}
		}
	}
	return v.result(len(all))
}

func checkWriterExclusive(h history.History) Result {
	var v violations
	all := history.Holdings(h)
	for key, hs := range byKey(all) {
		held := map[int]bool{}
		for _, e := range sweep(hs) {
			if !e.start {
				delete(held, e.i)
				continue
			}
			for j := range held {
				a, b := hs[j], hs[e.i]
				if a.Mode == "write" || b.Mode == "write" {
					v.add(e.t, b.Client, "%s %s of %s at %s overlaps %s %s since %s",
						b.Client, modeName(b.Mode), key, history.Rel(h, e.t), a.Client, modeName(a.Mode), history.Rel(h, a.From))
				}
			}
			held[e.i] = true
		}
	}
	return v.result(len(all))
}

func modeName(m string) string {
	if m == "" {
		return "holding"
	}
	return m
}
