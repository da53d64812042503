package checkers

import (
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// hb builds histories for table tests; times are milliseconds after start.
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

// addOp records an addition of delta to key; res KindOK returns after.
func (b *hb) addOp(client, key string, delta, call, ret int64, res history.Kind, after int64) *hb {
	return b.op(client, history.FnAdd, key, delta, 0, call, ret, res, key, after)
}

// lease records client's acquisition of key: an acquire called at call,
// returning at from with the holding, released at to (to < 0: never).
func (b *hb) lease(client, key string, call, from, to int64) *hb {
	b.op(client, history.FnAcquire, key, 0, 0, call, from, history.KindOK, key, 0)
	return b.hold(client, key, 0, from, to)
}

// setMax records a change of key's maximum to v, called at call, completed
// at ret with res.
func (b *hb) setMax(client, key string, v, call, ret int64, res history.Kind) *hb {
	return b.op(client, history.FnSetMax, key, v, 0, call, ret, res, key, v)
}

func (b *hb) fault(name string, from, to int64) *hb {
	b.add(history.Event{Time: from * ms, Client: history.Nemesis, Kind: history.KindFaultStart, Key: name})
	return b.add(history.Event{Time: to * ms, Client: history.Nemesis, Kind: history.KindFaultEnd, Key: name})
}

// notInjected records a fault window at at that could not be injected.
func (b *hb) notInjected(name string, at int64) *hb {
	b.add(history.Event{Time: at * ms, Client: history.Nemesis, Kind: history.KindFaultStart, Key: name})
	return b.add(history.Event{Time: at * ms, Client: history.Nemesis, Kind: history.KindFaultEnd, Key: name, Detail: history.NotInjected + ": refused"})
}

func (b *hb) build() history.History {
	b.h.Sort()
	return b.h
}
