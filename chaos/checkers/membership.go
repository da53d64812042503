package checkers

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// Membership proves what the observers of a group saw (history.KindView)
// against what its members went through, with bound B:
//
//   - Live members are listed: whenever a member (from its Join's return
//     to its Leave's call) and an observer both have a usable session, the
//     member's session does not change and no fault is on, the observer
//     lists the member with that session within B of the start of that
//     stretch, and keeps listing it to the stretch's end. For a watch
//     (history.ViewWatch) "lists at t" is the view in effect at t; for
//     Members calls (history.ViewMembers), every call made B or more into
//     the stretch, or after an earlier call of the same observer returned
//     listing the member, must list it.
//   - Dead members go: once a member's session was replaced (a new session
//     id seen for its client: the old one expired) or it left (its Leave
//     returned), no view of any observer lists that session's node from
//     the moment the observer has had B of usable session with no fault on
//     after it: neither the watch view in effect then, nor any later view,
//     nor any Members call made from then on.
//
// A session is usable while the client has one: from its Join's return (a
// member) or its first view (an observer), or from a session event
// "connected" or "new", until a session event "suspended". A new session id
// is a "new" session event or the session a Join returned with.
//
// Why B is enough, given ZooKeeper: a stretch starts once both sessions
// are usable and the ensemble is healed. From then on nothing waits on a
// timer: the member's node exists or is created again at once on its new
// session (persistent.Node: 1 create + 1 exists); ZooKeeper sends the
// observer's child watch notification when that create is applied (a watch
// set before a reconnection is set again by the client then, and one whose
// node changed meanwhile fires at once), and the observer lists the group
// again (1 getChildren + 1 getData). For a dead member, go-zookeeper opens
// a new session only after a server answered that the old one had expired,
// which the leader does by committing its close, and the close deletes the
// session's ephemeral nodes in the same transaction: the old node is gone
// before the new id can be seen, so measuring from the new id only gives
// the observer more time; its watch fires when the close is applied and
// its next listing lacks the node. A Leave returns once its delete was
// applied, with the same effect on the watch. Either way a few round trips suffice;
// B (several seconds) leaves room for a loaded machine.
//
// A live member already listed within its stretch, or a dead session that
// no view lists from its replacement on, is judged at once; otherwise a
// stretch or quiet time that ends (a fault, a suspension, the end of the
// observer's views) before B is not judged, and the Note counts it.
func Membership(bound time.Duration) Checker {
	return Checker{
		Name: "membership",
		Invariant: fmt.Sprintf("every observer lists every member whose session is usable within %v of quiet time, and stops listing a member's expired session (or one that left) within %v of quiet time",
			bound, bound),
		Check: func(h history.History) Result { return checkMembership(h, bound) },
	}
}

// span is [from, to) on the history clock.
type span struct{ from, to int64 }

// seg is a span during which a client had a usable session (session 0:
// not known).
type seg struct {
	span
	session int64
}

// intersect returns the overlaps of two sorted lists of disjoint spans.
func intersect(a, b []span) []span {
	var out []span
	for i, j := 0, 0; i < len(a) && j < len(b); {
		from, to := max(a[i].from, b[j].from), min(a[i].to, b[j].to)
		if from < to {
			out = append(out, span{from, to})
		}
		if a[i].to < b[j].to {
			i++
		} else {
			j++
		}
	}
	return out
}

// timeline is what the checker learns of one client's session.
type timeline struct {
	started bool
	usable  bool
	since   int64
	session int64
	segs    []seg
	// changes are the session ids the client had, with the time each was
	// first seen.
	changes []sessionAt
}

type sessionAt struct {
	at, session int64
}

func (tl *timeline) open(t int64) {
	tl.started = true
	if !tl.usable {
		tl.usable, tl.since = true, t
	}
}

func (tl *timeline) close(t int64) {
	tl.started = true
	if tl.usable {
		tl.segs = append(tl.segs, seg{span{tl.since, t}, tl.session})
		tl.usable = false
	}
}

// seen records that the client has session id from t on.
func (tl *timeline) seen(t, id int64) {
	if id == 0 || id == tl.session {
		return
	}
	if tl.usable && tl.since < t {
		tl.segs = append(tl.segs, seg{span{tl.since, t}, tl.session})
		tl.since = t
	}
	tl.session = id
	tl.changes = append(tl.changes, sessionAt{t, id})
}

func (tl *timeline) spans() []span {
	out := make([]span, len(tl.segs))
	for i, s := range tl.segs {
		out[i] = s.span
	}
	return out
}

// member is one Join of a client.
type member struct {
	client, id string
	joined     int64
	leaving    int64 // its Leave's call, or MaxInt64
	left       int64 // its Leave's ok, or -1
}

// view is one list an observer saw.
type view struct {
	at, call int64
	has      map[history.ViewEntry]bool
}

// series is the views of one observer from one source.
type series struct {
	observer, mode string
	views          []view
	horizon        int64 // no view is in effect from then on (watch)
}

// inEffect returns the index of the watch view in effect at t, or -1.
func (s *series) inEffect(t int64) int {
	if t >= s.horizon {
		return -1
	}
	return sort.Search(len(s.views), func(i int) bool { return s.views[i].at > t }) - 1
}

func checkMembership(h history.History, bound time.Duration) Result {
	var v violations
	b := int64(bound)
	tls := map[string]*timeline{}
	tl := func(c string) *timeline {
		if tls[c] == nil {
			tls[c] = &timeline{}
		}
		return tls[c]
	}
	var members []*member
	joinOf := map[string]*member{} // client -> its latest Join
	calls := map[int64]int64{}     // op -> its invoke's time
	watch, polls := map[string]*series{}, map[string]*series{}
	var observers []string
	last := map[string]int64{}
	for _, e := range h.Events {
		if !workloadClient(e.Client) {
			continue
		}
		last[e.Client] = e.Time
		switch e.Kind {
		case history.KindSession:
			switch {
			case e.Detail == "suspended":
				tl(e.Client).close(e.Time)
			case e.Detail == "connected":
				tl(e.Client).open(e.Time)
			case strings.HasPrefix(e.Detail, "new"):
				tl(e.Client).open(e.Time)
				tl(e.Client).seen(e.Time, e.Value)
			}
		case history.KindInvoke:
			calls[e.Op] = e.Time
			if m := joinOf[e.Client]; e.Fn == history.FnLeave && m != nil && m.id == e.Key && m.leaving == math.MaxInt64 {
				m.leaving = e.Time
			}
		case history.KindOK:
			switch e.Fn {
			case history.FnJoin:
				t := tl(e.Client)
				if !t.started {
					t.open(e.Time)
				}
				t.seen(e.Time, e.Value)
				m := &member{client: e.Client, id: e.Key, joined: e.Time, leaving: math.MaxInt64, left: -1}
				members = append(members, m)
				joinOf[e.Client] = m
			case history.FnLeave:
				if m := joinOf[e.Client]; m != nil && m.id == e.Key && m.left < 0 {
					m.left = e.Time
				}
			case history.FnMembers:
				if t := tl(e.Client); !t.started {
					t.open(e.Time)
				}
			}
		case history.KindView:
			if t := tl(e.Client); !t.started && e.Mode != history.ViewClosed {
				t.open(e.Time)
			}
			if watch[e.Client] == nil && polls[e.Client] == nil {
				observers = append(observers, e.Client)
			}
			src := watch
			switch e.Mode {
			case history.ViewWatch, history.ViewClosed:
			case history.ViewMembers:
				src = polls
			default:
				continue
			}
			s := src[e.Client]
			if s == nil {
				s = &series{observer: e.Client, horizon: math.MaxInt64}
				src[e.Client] = s
			}
			if e.Mode == history.ViewClosed {
				s.horizon = min(s.horizon, e.Time)
				continue
			}
			entries, err := history.ParseView(e.Detail)
			if err != nil {
				v.add(e.Time, e.Client, "unreadable view: %v", err)
				continue
			}
			vw := view{at: e.Time, call: e.Time, has: map[history.ViewEntry]bool{}}
			for _, en := range entries {
				vw.has[en] = true
			}
			if c, ok := calls[e.Op]; ok && e.Mode == history.ViewMembers {
				vw.call = c
			}
			s.views = append(s.views, vw)
		}
	}
	for _, t := range tls {
		t.close(math.MaxInt64)
	}
	var all []*series
	for _, o := range observers {
		if s := watch[o]; s != nil && len(s.views) > 0 {
			s.mode = history.ViewWatch
			if s.horizon == math.MaxInt64 {
				s.horizon = last[o] + 1 // nothing is known to be in effect after its last event
			}
			all = append(all, s)
		}
		if s := polls[o]; s != nil && len(s.views) > 0 {
			s.mode = history.ViewMembers
			sort.SliceStable(s.views, func(i, j int) bool { return s.views[i].call < s.views[j].call })
			all = append(all, s)
		}
	}
	quiet := quietSpans(h)
	checked, undecided := 0, 0
	rel := func(t int64) string { return history.Rel(h, t) }
	for _, m := range members {
		mt := tl(m.client)
		for _, s := range all {
			o := tl(s.observer).spans()
			name := fmt.Sprintf("%s (%s)", s.observer, s.mode)
			// Live: each stretch with both sessions usable and no fault.
			for _, sg := range mt.segs {
				if sg.session == 0 {
					continue
				}
				life := []span{{max(sg.from, m.joined), min(sg.to, m.leaving)}}
				if life[0].from >= life[0].to {
					continue
				}
				good := intersect(intersect(life, o), quiet)
				if s.mode == history.ViewWatch {
					good = intersect(good, []span{{math.MinInt64, s.horizon}})
				}
				want := history.ViewEntry{ID: m.id, Session: sg.session}
				for _, g := range good {
					switch listedIn(s, g, want, b) {
					case judged:
						checked++
					case notJudged:
						undecided++
					case notListed:
						checked++
						v.add(g.from+b, s.observer, "%s did not list %s (session 0x%x, usable since %s) within %v of quiet time",
							name, m.id, sg.session, rel(g.from), bound)
					case listedLate:
						checked++
						v.add(g.from+b, s.observer, "%s listed %s (session 0x%x, usable since %s) only more than %v into quiet time",
							name, m.id, sg.session, rel(g.from), bound)
					case dropped:
						checked++
						v.add(g.from, s.observer, "%s stopped listing %s (session 0x%x) while its session stayed usable (since %s) and no fault was on",
							name, m.id, sg.session, rel(g.from))
					}
				}
			}
			// Dead: each session replaced, and the last one once it left.
			for i, c := range mt.changes {
				next := int64(math.MaxInt64)
				if i+1 < len(mt.changes) {
					next = mt.changes[i+1].at
				}
				if next <= m.joined || c.at >= m.leaving {
					continue // not this Join's session
				}
				dead, why := next, "was replaced"
				if m.left >= 0 && m.left < dead {
					dead, why = m.left, "left"
				}
				if dead == math.MaxInt64 || !observedFrom(s, dead) && dead >= s.end() {
					continue // the observer's views ended before: nothing to judge
				}
				good := intersect(o, quiet)
				if s.mode == history.ViewWatch {
					good = intersect(good, []span{{math.MinInt64, s.horizon}})
				}
				d := int64(-1)
				for _, g := range good {
					if from := max(g.from, dead); g.to-from >= b {
						d = from + b
						break
					}
				}
				gone := history.ViewEntry{ID: m.id, Session: c.session}
				if t, ok := listedAfter(s, d, gone); d >= 0 && ok {
					checked++
					v.add(t, s.observer, "%s lists %s of session 0x%x at %s, though that session %s at %s: more than %v of quiet time before",
						name, m.id, c.session, rel(t), why, rel(dead), bound)
					continue
				}
				_, listed := listedAfter(s, dead, gone)
				if (d >= 0 && observedFrom(s, d)) || (observedFrom(s, dead) && !listed) {
					checked++ // not listed after the bound, or not at all once it was dead
				} else {
					undecided++
				}
			}
		}
	}
	r := v.result(checked)
	if undecided > 0 {
		note := fmt.Sprintf("%d check(s) not judged: the stretch or quiet time they needed ended (a fault, a suspension, the end of the views) within %v", undecided, bound)
		if r.Note != "" {
			note = r.Note + "; " + note
		}
		r.Note = note
	}
	return r
}

// quietSpans returns the spans of h with no fault window open.
func quietSpans(h history.History) []span {
	ws := FaultWindows(h)
	sort.Slice(ws, func(i, j int) bool { return ws[i].Start < ws[j].Start })
	var out []span
	from := int64(math.MinInt64)
	for _, w := range ws {
		if w.Start > from {
			out = append(out, span{from, w.Start})
		}
		from = max(from, w.End)
	}
	return append(out, span{from, math.MaxInt64})
}

type verdict int

const (
	judged verdict = iota
	notJudged
	notListed
	listedLate
	dropped
)

// listedIn judges whether s lists want within bound of g's start and then
// to g's end.
func listedIn(s *series, g span, want history.ViewEntry, bound int64) verdict {
	if s.mode == history.ViewMembers {
		listed := int64(math.MaxInt64) // return of the first call listing it
		decided := false
		for _, p := range s.views {
			if p.at < g.from || p.at >= g.to {
				continue
			}
			// A call that returned in g listing it is evidence; one made
			// in g must list it from the bound on, or once an earlier call
			// returned listing it.
			must := p.call >= g.from && (p.call >= g.from+bound || p.call >= listed)
			if p.has[want] {
				listed = min(listed, p.at)
			} else if must {
				if p.call >= listed {
					return dropped
				}
				return notListed
			}
			decided = decided || must
		}
		if decided {
			return judged
		}
		return notJudged
	}
	first := int64(-1)
	if i := s.inEffect(g.from); i >= 0 && s.views[i].has[want] {
		first = g.from
	}
	if first < 0 {
		for _, vw := range s.views {
			if vw.at > g.from && vw.at < g.to && vw.has[want] {
				first = vw.at
				break
			}
		}
	}
	switch {
	case first < 0 && g.to-g.from >= bound:
		return notListed
	case first < 0:
		return notJudged
	case first-g.from > bound:
		return listedLate
	}
	for _, vw := range s.views {
		if vw.at > first && vw.at < g.to && !vw.has[want] {
			return dropped
		}
	}
	return judged
}

// end returns when s stops saying anything: its watch's horizon, or its
// last Members call.
func (s *series) end() int64 {
	if s.mode == history.ViewWatch {
		return s.horizon
	}
	return s.views[len(s.views)-1].call
}

// observedFrom reports whether s says anything from t on: a watch view in
// effect at t, or a Members call made from t on.
func observedFrom(s *series, t int64) bool {
	if s.mode == history.ViewWatch {
		return s.inEffect(t) >= 0
	}
	return len(s.views) > 0 && s.views[len(s.views)-1].call >= t
}

// listedAfter returns the first instant from d on at which s lists gone:
// the watch view in effect at d or a later one, or a Members call made
// from d on.
func listedAfter(s *series, d int64, gone history.ViewEntry) (int64, bool) {
	if s.mode == history.ViewWatch {
		if i := s.inEffect(d); i >= 0 && s.views[i].has[gone] {
			return d, true
		}
	}
	for _, vw := range s.views {
		after := vw.at > d
		if s.mode == history.ViewMembers {
			after = vw.call >= d
		}
		if after && vw.has[gone] {
			return vw.at, true
		}
	}
	return 0, false
}
