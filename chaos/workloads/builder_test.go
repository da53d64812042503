package workloads

import (
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// hb builds histories for the workloads' tests, as the checkers' tests do
// (the part of their builder these tests use: test files do not cross
// packages); times are milliseconds after start.
type hb struct {
	h history.History
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

func (b *hb) fault(name string, from, to int64) *hb {
	b.add(history.Event{Time: from * ms, Client: history.Nemesis, Kind: history.KindFaultStart, Key: name})
	return b.add(history.Event{Time: to * ms, Client: history.Nemesis, Kind: history.KindFaultEnd, Key: name})
}

func (b *hb) build() history.History {
	b.h.Sort()
	return b.h
}
