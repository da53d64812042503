package chaos

import "time"

// hb builds histories for table tests; times are milliseconds after start.
type hb struct {
	h      History
	nextOp int64
}

const ms = int64(time.Millisecond)

func newHB(endMS int64) *hb {
	return &hb{h: History{Start: 0, End: endMS * ms, Clock: ClockName}}
}

func (b *hb) add(e Event) *hb {
	e.Seq = int64(len(b.h.Events) + 1)
	b.h.Events = append(b.h.Events, e)
	return b
}

// hold records an acquired at from and a release at to (to < 0: none).
func (b *hb) hold(client, key string, token, from, to int64) *hb {
	return b.holdMode(client, key, "", token, from, to)
}

func (b *hb) holdMode(client, key, mode string, token, from, to int64) *hb {
	b.add(Event{Time: from * ms, Client: client, Kind: KindAcquired, Key: key, Token: token, Mode: mode})
	if to >= 0 {
		b.add(Event{Time: to * ms, Client: client, Kind: KindReleased, Key: key, Token: token})
	}
	return b
}

// op records an operation from call to ret (ret < 0: no completion).
func (b *hb) op(client string, fn Fn, key string, arg, in int64, call, ret int64, res Kind, outKey string, out int64) *hb {
	b.nextOp++
	b.add(Event{Time: call * ms, Client: client, Kind: KindInvoke, Op: b.nextOp, Fn: fn, Key: key, Arg: arg, Value: in})
	if ret >= 0 {
		t := ret * ms
		if res == KindUnknown {
			t = call * ms
		}
		b.add(Event{Time: t, Client: client, Kind: res, Op: b.nextOp, Fn: fn, Key: outKey, Arg: arg, Value: out})
	}
	return b
}

func (b *hb) read(client, key string, call, ret, v int64) *hb {
	return b.op(client, FnRead, key, 0, 0, call, ret, KindOK, key, v)
}

func (b *hb) cas(client, key string, from, to, call, ret int64, res Kind) *hb {
	return b.op(client, FnCAS, key, from, to, call, ret, res, key, to)
}

func (b *hb) fault(name string, from, to int64) *hb {
	b.add(Event{Time: from * ms, Client: Nemesis, Kind: KindFaultStart, Key: name})
	return b.add(Event{Time: to * ms, Client: Nemesis, Kind: KindFaultEnd, Key: name})
}

func (b *hb) build() History {
	b.h.Sort()
	return b.h
}
