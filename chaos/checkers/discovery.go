package checkers

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/faults"
	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// DiscoveryConverges proves what the discovery Providers held
// (history.KindProviderView) against what the registrants did
// (history.FnRegister, FnUpdateInstance, FnUnregister on an instance id,
// the version its data carries in Arg), with bound B:
//
//   - Nothing invented: a view lists an instance only at a version whose
//     register or update was invoked before the view was recorded.
//   - Views converge on the registered set: at every instant t of quiet
//     time (below), each provider's view in effect at t holds, for every
//     instance id, a state its registrant's operations allow at t: the
//     state after the last operation on the id acknowledged (ok) by t-B,
//     or after one invoked since (an operation whose outcome is unknown
//     may or may not have happened). A state is "absent" (never
//     registered, or unregistered) or "present at version v" (the latest
//     data). So, once quiet, a view lists exactly the instances of the live
//     registrants, with their latest data, B after each was acknowledged.
//   - The dead go: a registrant that abandoned its session at X
//     (history.KindCrash with Fn FnRegister; Value, its negotiated timeout
//     T) sent nothing more on it; the ensemble expires it, and deletes its
//     instances, by X+T, or T after the end of a server fault's window
//     that overlaps that wait (a new ZooKeeper leader gives every session
//     a fresh timeout; a fault on client links does not delay it). From
//     that expiry plus B, no view in quiet time lists
//     a version written under the abandoned session. Until then the
//     instances of that session are not judged by the rule above (the
//     registrant is no longer live, yet ZooKeeper still lists them). When
//     the registrant registers such an instance again on a new session,
//     the rule above applies to it again, and until its last acknowledged
//     operation is one of the new session's, the instance may also be
//     absent from 2T/3 after X on (the old node may have expired before
//     the new one was made; no sooner, as go-zookeeper pings every T/3 and
//     the server expires a session T after the last request it heard). A
//     registration that replaces the old node (Register's delete and
//     create in one multi) leaves no moment without a node before that.
//
// Quiet time for a provider and an instance at t: no fault window overlaps
// (t-B, t]; neither the provider's client nor the instance's registrant's
// client recorded a session event (history.KindSession: suspended,
// connected, a new session, a reconnection) in (t-B, t], and neither is
// suspended at t; the provider has a view in effect (it started and is not
// closed). The instants judged are the views' own times and every moment
// at which the allowed states or the quiet time change (an
// acknowledgement's time plus B, a heal or a session event plus B, an
// expiry plus B); between them neither a view nor what it must hold
// changes.
//
// Why B is enough, given ZooKeeper: once quiet, nothing waits on a timer.
// An acknowledged register, update or unregister was applied by the
// ensemble; the change fires the Provider's watch (a child watch for an
// instance added or removed, a data watch for an update) when the
// provider's server applies it, and the Provider reads what changed:
// 1 getChildren + 1 getData, or 1 getData. A provider whose session was
// replaced reads everything again (1 getChildren + 1 getData per
// instance); one that reconnected within its session has its watches set
// again by go-zookeeper, and those whose nodes changed meanwhile fire at
// once; a registrant's instance lost with its session is created again on
// the new session within a round trip (persistent.Node). An abandoned
// session's instances are deleted by the server when it expires the
// session (a session tick after its timeout at most), which fires the
// providers' watches. Each is a few round trips, milliseconds on an idle
// ensemble; B (seconds) leaves room for a loaded machine (the checker's
// Note gives the largest lag it measured). B must also be short enough
// for a quick-tier scenario to go on for B after its heal, or nothing
// after the heal is judged.
func DiscoveryConverges(bound time.Duration) Checker {
	return Checker{
		Name: "discovery-converges",
		Invariant: fmt.Sprintf("in quiet time every provider's view equals the instances of the live registrants with their latest data, %v after each change was acknowledged, and lists no instance of an abandoned session %v past its expiry",
			bound, bound),
		Check: func(h history.History) Result { return checkDiscovery(h, bound) },
	}
}

// discOp is a registrant's operation on one instance id whose outcome is
// ok or unknown (a failed one changed nothing).
type discOp struct {
	fn        history.Fn
	version   int64
	call, ret int64 // ret is math.MaxInt64 when unknown
	ok        bool
}

// discID is the operations on one instance id, in call order, and the
// client that made them.
type discID struct {
	client string
	ops    []discOp
}

// discView is one view event of a provider.
type discView struct {
	t      int64
	inst   map[string]int64
	closed bool
}

// discCrash is a session a registrant abandoned at x, with its timeout,
// expired by expiry.
type discCrash struct {
	client             string
	x, timeout, expiry int64
}

// clientSessions is what the history says of one client's session.
type clientSessions struct {
	events []int64        // every session event, in time order
	states []sessionState // suspended / connected, in time order
}

type sessionState struct {
	t         int64
	suspended bool
}

// disturbed reports whether the client recorded a session event in
// (from, to] or is suspended at to.
func (s *clientSessions) disturbed(from, to int64) bool {
	if s == nil {
		return false
	}
	i := sort.Search(len(s.events), func(i int) bool { return s.events[i] > from })
	if i < len(s.events) && s.events[i] <= to {
		return true
	}
	j := sort.Search(len(s.states), func(i int) bool { return s.states[i].t > to })
	return j > 0 && s.states[j-1].suspended
}

// state is an instance's state in a view or after an operation.
type discState struct {
	present bool
	version int64
}

func (s discState) String() string {
	if !s.present {
		return "absent"
	}
	return fmt.Sprintf("version %d", s.version)
}

func (o discOp) state() discState {
	if o.fn == history.FnUnregister {
		return discState{}
	}
	return discState{present: true, version: o.version}
}

// allowed returns the states the id may have in a view in effect at t,
// given the bound: those after the ops from the last one acknowledged by
// t-bound (or the initial absence) to the last one invoked by t. It also
// returns the last acknowledged op (nil: none).
func (d *discID) allowed(t, bound int64) ([]discState, *discOp) {
	k, m := -1, -1
	for i, o := range d.ops {
		if o.call <= t {
			m = i
		}
		if o.ok && o.ret <= t-bound {
			k = i
		}
	}
	var out []discState
	if k < 0 {
		out = append(out, discState{})
	}
	for j := max(k, 0); j <= m; j++ {
		out = append(out, d.ops[j].state())
	}
	if k < 0 {
		return out, nil
	}
	return out, &d.ops[k]
}

// dead returns the abandoned session that owned the id at t: a crash of
// its client at or before t after which the id has no operation. Nil when
// none.
func (d *discID) dead(crashes []discCrash, t int64) *discCrash {
	var last int64 = math.MinInt64
	for _, o := range d.ops {
		last = max(last, o.call)
	}
	for i := range crashes {
		c := &crashes[i]
		if c.client == d.client && c.x <= t && last < c.x {
			return c
		}
	}
	return nil
}

// expiredSince reports whether the id's client abandoned a session in
// (from, t] that the ensemble may have expired by t: no sooner than 2/3
// of its timeout after X, since go-zookeeper pings every third of it and
// the server expires a session a timeout after the last request it heard.
func (d *discID) expiredSince(crashes []discCrash, from, t int64) bool {
	for _, c := range crashes {
		if c.client == d.client && c.x > from && t >= c.x+2*c.timeout/3 {
			return true
		}
	}
	return false
}

func checkDiscovery(h history.History, bound time.Duration) Result {
	var v violations
	b := int64(bound)
	ids := map[string]*discID{}
	for _, o := range history.Operations(h) {
		switch o.Fn {
		case history.FnRegister, history.FnUpdateInstance, history.FnUnregister:
		default:
			continue
		}
		if o.Result == history.KindFail {
			continue
		}
		d := ids[o.Key]
		if d == nil {
			d = &discID{client: o.Client}
			ids[o.Key] = d
		}
		d.ops = append(d.ops, discOp{fn: o.Fn, version: o.Arg, call: o.Call, ret: o.Return, ok: o.Result == history.KindOK})
	}
	for _, d := range ids {
		sort.SliceStable(d.ops, func(i, j int) bool { return d.ops[i].call < d.ops[j].call })
	}
	windows := FaultWindows(h)
	views := map[string][]discView{}
	sessions := map[string]*clientSessions{}
	var crashes []discCrash
	var marks []int64 // instants at which what is judged may change
	for _, e := range h.Events {
		switch e.Kind {
		case history.KindProviderView:
			dv := discView{t: e.Time, closed: e.Mode == history.ProviderClosed}
			if !dv.closed {
				inst, err := history.ParseInstances(e.Detail)
				if err != nil {
					v.add(e.Time, e.Client, "unreadable view: %v", err)
					continue
				}
				dv.inst = inst
			}
			views[e.Client] = append(views[e.Client], dv)
			marks = append(marks, e.Time)
		case history.KindSession:
			s := sessions[e.Client]
			if s == nil {
				s = &clientSessions{}
				sessions[e.Client] = s
			}
			s.events = append(s.events, e.Time)
			switch e.Detail {
			case "suspended":
				s.states = append(s.states, sessionState{e.Time, true})
			case "connected":
				s.states = append(s.states, sessionState{e.Time, false})
			}
			marks = append(marks, e.Time+b)
		case history.KindCrash:
			if e.Fn == history.FnRegister {
				crashes = append(crashes, discCrash{client: e.Client, x: e.Time, timeout: e.Value, expiry: e.Time + e.Value})
			}
		case history.KindOK:
			switch e.Fn {
			case history.FnRegister, history.FnUpdateInstance, history.FnUnregister:
				marks = append(marks, e.Time+b)
			}
		}
	}
	for i := range crashes {
		c := &crashes[i]
		t := c.timeout
		for changed := true; changed; {
			changed = false
			for _, w := range windows {
				if f, err := faults.ByName(w.Fault); err == nil && !f.Server {
					continue // a client's link: the ensemble's clock for the abandoned session runs on
				}
				if w.Start <= c.expiry && w.End >= c.x && w.End+t > c.expiry {
					c.expiry, changed = w.End+t, true
				}
			}
		}
		marks = append(marks, c.expiry+b)
	}
	for _, w := range windows {
		marks = append(marks, w.End+b)
	}
	sort.Slice(marks, func(i, j int) bool { return marks[i] < marks[j] })
	faultNear := func(t int64) bool {
		for _, w := range windows {
			if w.Start <= t && w.End > t-b {
				return true
			}
		}
		return false
	}
	idNames := make([]string, 0, len(ids))
	for id := range ids {
		idNames = append(idNames, id)
	}
	sort.Strings(idNames)
	providers := make([]string, 0, len(views))
	for p := range views {
		providers = append(providers, p)
	}
	sort.Strings(providers)

	// Nothing invented: every listed version was invoked before the view.
	reported := map[string]bool{}
	for _, p := range providers {
		for i, dv := range views[p] {
			for id, ver := range dv.inst {
				d, known := ids[id]
				found := false
				if known {
					for _, o := range d.ops {
						if o.fn != history.FnUnregister && o.version == ver && o.call <= dv.t {
							found = true
							break
						}
					}
				}
				if !found {
					reported[fmt.Sprintf("live|%s|%d|%s", p, i, id)] = true
					v.add(dv.t, p, "%s's view at %s lists %s at version %d, which nobody had registered", p, history.Rel(h, dv.t), id, ver)
				}
			}
		}
	}

	checked := 0
	deadJudged := map[string]bool{} // instances of abandoned sessions judged after their expiry
	var lags []time.Duration
	for _, p := range providers {
		pv := views[p]
		ps := sessions[p]
		// at returns the index of p's view in effect at t, or -1.
		at := func(t int64) int {
			i := sort.Search(len(pv), func(i int) bool { return pv[i].t > t }) - 1
			if i < 0 || pv[i].closed {
				return -1
			}
			return i
		}
		for mi, t := range marks {
			if mi > 0 && marks[mi-1] == t {
				continue
			}
			if t > h.End {
				break
			}
			vi := at(t)
			if vi < 0 || faultNear(t) || ps.disturbed(t-b, t) {
				continue
			}
			checked++
			view := pv[vi].inst
			for _, id := range idNames {
				d := ids[id]
				ver, listed := view[id]
				got := discState{present: listed, version: ver}
				if c := d.dead(crashes, t); c != nil {
					if t >= c.expiry+b {
						deadJudged[id] = true
					}
					if listed && t >= c.expiry+b {
						key := fmt.Sprintf("dead|%s|%d|%s", p, vi, id)
						if !reported[key] {
							reported[key] = true
							v.add(t, p, "%s's view (since %s) still lists %s at version %d at %s, though %s abandoned its session at %s and it expired by %s",
								p, history.Rel(h, pv[vi].t), id, ver, history.Rel(h, t), d.client, history.Rel(h, c.x), history.Rel(h, c.expiry))
						}
					}
					continue
				}
				if sessions[d.client].disturbed(t-b, t) {
					continue
				}
				states, acked := d.allowed(t, b)
				if acked != nil && d.expiredSince(crashes, acked.call, t) {
					// Registered again after an abandoned session whose
					// node may have expired before the new registration.
					states = append(states, discState{})
				}
				ok := false
				for _, s := range states {
					if s == got {
						ok = true
						break
					}
				}
				if ok {
					continue
				}
				key := fmt.Sprintf("live|%s|%d|%s", p, vi, id)
				if reported[key] {
					continue
				}
				reported[key] = true
				want := "absent"
				if acked != nil {
					want = fmt.Sprintf("%s (its %s acknowledged at %s) or what a later operation made it", acked.state(), acked.fn, history.Rel(h, acked.ret))
				}
				v.add(t, p, "%s's view (since %s) has %s %s at %s; %v after its registrant %s it must be %s",
					p, history.Rel(h, pv[vi].t), id, got, history.Rel(h, t), bound, d.client, want)
			}
		}
		lags = append(lags, discoveryLags(pv, ids, crashes, sessions, ps, faultNear, b)...)
	}
	r := v.result(checked)
	if len(crashes) > 0 {
		note := fmt.Sprintf("%d abandoned session(s), %d of their instances judged after expiry", len(crashes), len(deadJudged))
		if r.Note != "" {
			note = r.Note + "; " + note
		}
		r.Note = note
	}
	if len(lags) > 0 {
		sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
		note := fmt.Sprintf("providers followed %d acknowledged changes in quiet time within %v (median %v)",
			len(lags), lags[len(lags)-1].Round(time.Millisecond), lags[len(lags)/2].Round(time.Millisecond))
		if r.Note != "" {
			note = r.Note + "; " + note
		}
		r.Note = note
	}
	return r
}

// discoveryLags measures, for each acknowledged operation whose deadline
// (its acknowledgement plus b) is judged for the provider, how long after
// the acknowledgement the provider's view first reflected it or a later
// operation on the id.
func discoveryLags(pv []discView, ids map[string]*discID, crashes []discCrash, sessions map[string]*clientSessions,
	ps *clientSessions, faultNear func(int64) bool, b int64) []time.Duration {
	var out []time.Duration
	for id, d := range ids {
		for j, o := range d.ops {
			if !o.ok {
				continue
			}
			t := o.ret + b
			if faultNear(t) || ps.disturbed(t-b, t) || sessions[d.client].disturbed(t-b, t) || d.dead(crashes, t) != nil {
				continue
			}
			for _, dv := range pv {
				if dv.closed || dv.t < o.call {
					continue
				}
				if reflects(d, j, dv, id) {
					out = append(out, time.Duration(max(0, dv.t-o.ret)))
					break
				}
			}
		}
	}
	return out
}

// reflects reports whether view dv shows the id at op j's state or a
// later one's.
func reflects(d *discID, j int, dv discView, id string) bool {
	ver, listed := dv.inst[id]
	for k := j; k < len(d.ops); k++ {
		if d.ops[k].call > dv.t {
			break
		}
		if d.ops[k].state() == (discState{present: listed, version: ver}) {
			return true
		}
	}
	return false
}
