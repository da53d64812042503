package report

import (
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/faults"
	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// hb builds histories for the report's tests, as the checkers' tests
// do (a copy of their builder: test files do not cross packages); times
// are milliseconds after start.
type hb struct {
	h      history.History
	nextOp int64
}

const ms = int64(time.Millisecond)

func newHB(endMS int64) *hb {
	return &hb{h: history.History{Start: 0, End: endMS * ms, Clock: history.ClockName}}
}

func (b *hb) add(e history.Event) *hb {
	e.Seq = int64(len(b.h.Events) + 1)
	b.h.Events = append(b.h.Events, e)
	return b
}

// hold records an acquired at from and a release at to (to < 0: none).
func (b *hb) hold(client, key string, token, from, to int64) *hb {
	return b.holdMode(client, key, "", token, from, to)
}

func (b *hb) holdMode(client, key, mode string, token, from, to int64) *hb {
	b.add(history.Event{Time: from * ms, Client: client, Kind: history.KindAcquired, Key: key, Token: token, Mode: mode})
	if to >= 0 {
		b.add(history.Event{Time: to * ms, Client: client, Kind: history.KindReleased, Key: key, Token: token})
	}
	return b
}

// op records an operation from call to ret (ret < 0: no completion).
func (b *hb) op(client string, fn history.Fn, key string, arg, in int64, call, ret int64, res history.Kind, outKey string, out int64) *hb {
	b.nextOp++
	b.add(history.Event{Time: call * ms, Client: client, Kind: history.KindInvoke, Op: b.nextOp, Fn: fn, Key: key, Arg: arg, Value: in})
	if ret >= 0 {
		t := ret * ms
		if res == history.KindUnknown {
			t = call * ms
		}
		b.add(history.Event{Time: t, Client: client, Kind: res, Op: b.nextOp, Fn: fn, Key: outKey, Arg: arg, Value: out})
	}
	return b
}

func (b *hb) read(client, key string, call, ret, v int64) *hb {
	return b.op(client, history.FnRead, key, 0, 0, call, ret, history.KindOK, key, v)
}

func (b *hb) cas(client, key string, from, to, call, ret int64, res history.Kind) *hb {
	return b.op(client, history.FnCAS, key, from, to, call, ret, res, key, to)
}

func (b *hb) fault(name string, from, to int64) *hb {
	b.add(history.Event{Time: from * ms, Client: history.Nemesis, Kind: history.KindFaultStart, Key: name})
	return b.add(history.Event{Time: to * ms, Client: history.Nemesis, Kind: history.KindFaultEnd, Key: name})
}

func (b *hb) build() history.History {
	b.h.Sort()
	return b.h
}

// target records a fault target in a hand-made history.
func (b *hb) target(fault string, at int64, tg faults.Target) *hb {
	tg.Fault = fault
	e := faults.TargetEvent(tg)
	e.Time = at * ms
	return b.add(e)
}

func (b *hb) lost(client, key string, token, at int64) *hb {
	return b.add(history.Event{Time: at * ms, Client: client, Kind: history.KindLost, Key: key, Token: token, Detail: "suspended"})
}

// tpc builds two-phase histories: coordinator co, sites p1 and p2.
type tpc struct{ *hb }

func newTPC() tpc { return tpc{newHB(100)} }

func (b tpc) begin(tx string, at int64) tpc {
	b.op("co", history.FnBegin, tx, 0, 0, at, at+1, history.KindOK, tx, 1)
	return b
}

func (b tpc) decide(tx string, d, at int64) tpc {
	b.op("co", history.FnDecide, tx, 0, 0, at, at+1, history.KindOK, tx, d)
	return b
}

func (b tpc) crash(client, tx, where string, at int64) tpc {
	fn := history.FnLearn
	if client == "co" {
		fn = history.FnDecide
	}
	b.add(history.Event{Time: at * ms, Client: client, Kind: history.KindCrash, Fn: fn, Key: tx, Detail: where})
	return b
}

func (b tpc) resume(client, tx, detail string, at int64) tpc {
	fn := history.FnLearn
	if client == "co" {
		fn = history.FnDecide
	}
	b.add(history.Event{Time: at * ms, Client: client, Kind: history.KindResume, Fn: fn, Key: tx, Detail: detail})
	return b
}

// faultEvent is a fault's start (start true) or an end that says it was
// not injected, at ms.
func faultEvent(name string, at int64, start bool) history.Event {
	if start {
		return history.Event{Time: at * ms, Seq: at, Client: history.Nemesis, Kind: history.KindFaultStart, Key: name}
	}
	return history.Event{Time: at * ms, Seq: at, Client: history.Nemesis, Kind: history.KindFaultEnd, Key: name, Detail: "not injected: refused"}
}
