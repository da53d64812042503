package history

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Recorder collects the events of one scenario. It is safe for concurrent
// use; events from worker subprocesses are added with Add, keeping their
// own timestamps.
type Recorder struct {
	mu     sync.Mutex
	events []Event
	seq    int64
	start  int64

	clientProgress map[string]int64 // latest progress per client, under mu
	clientFirst    map[string]int64 // first event per workload client, under mu
	progress       int              // workload clients' progress events, under mu

	nextOp       atomic.Int64
	lastProgress atomic.Int64
	tee          func(Event) // called with every event added, outside the lock
}

// NewRecorder returns an empty recorder whose history starts now.
func NewRecorder() *Recorder {
	return &Recorder{start: Now()}
}

// NewTeeRecorder returns an empty recorder whose operation ids start above
// opBase and that calls tee with every event added, outside its lock: a
// worker process streams its events to the parent so.
func NewTeeRecorder(opBase int64, tee func(Event)) *Recorder {
	r := NewRecorder()
	r.nextOp.Store(opBase)
	r.tee = tee
	return r
}

// Add records e. A zero Time is set to Now; Seq is always assigned here.
func (r *Recorder) Add(e Event) Event {
	r.mu.Lock()
	if e.Time == 0 {
		e.Time = Now()
	}
	r.seq++
	e.Seq = r.seq
	r.events = append(r.events, e)
	if IsWorkloadClient(e.Client) {
		if r.clientFirst == nil {
			r.clientFirst = map[string]int64{}
		}
		if f, ok := r.clientFirst[e.Client]; !ok || e.Time < f {
			r.clientFirst[e.Client] = e.Time
		}
		if IsProgress(e) {
			r.progress++
		}
	}
	if IsProgress(e) && e.Time > r.clientProgress[e.Client] {
		if r.clientProgress == nil {
			r.clientProgress = map[string]int64{}
		}
		r.clientProgress[e.Client] = e.Time
	}
	r.mu.Unlock()
	if r.tee != nil {
		r.tee(e)
	}
	if IsProgress(e) {
		for {
			last := r.lastProgress.Load()
			if e.Time <= last || r.lastProgress.CompareAndSwap(last, e.Time) {
				break
			}
		}
	}
	return e
}

// NewOpID returns a fresh operation id, unique within the recorder.
func (r *Recorder) NewOpID() int64 { return r.nextOp.Add(1) }

// LastProgress returns the time of the latest progress event (see
// IsProgress), or 0.
func (r *Recorder) LastProgress() int64 { return r.lastProgress.Load() }

// LastProgressOf returns the time of client's latest progress event, or 0.
func (r *Recorder) LastProgressOf(client string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.clientProgress[client]
}

// Behind returns, sorted, the workload clients (IsWorkloadClient) that
// recorded an event before t and no progress after it: the clients the
// liveness checker still expects to progress after a heal at t. A client
// that joined after t is not behind.
func (r *Recorder) Behind(t int64) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var behind []string
	for c, f := range r.clientFirst {
		if f < t && r.clientProgress[c] <= t {
			behind = append(behind, c)
		}
	}
	slices.Sort(behind)
	return behind
}

// Progress returns how many progress events (IsProgress) the workload
// clients (IsWorkloadClient) have recorded so far: what the throughput
// checker counts before the first fault.
func (r *Recorder) Progress() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.progress
}

// Start returns the time the recorder was made.
func (r *Recorder) Start() int64 { return r.start }

// Len returns the number of events recorded so far.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// History returns a sorted copy of the events, from Start to now.
func (r *Recorder) History() History {
	r.mu.Lock()
	h := History{Clock: ClockName, Start: r.start, End: Now(), Events: append([]Event(nil), r.events...)}
	r.mu.Unlock()
	h.Sort()
	if n := len(h.Events); n > 0 && h.Events[n-1].Time > h.End {
		h.End = h.Events[n-1].Time
	}
	return h
}

// Client returns a handle that records events for the named client.
func (r *Recorder) Client(name string) *ClientLog { return &ClientLog{r: r, name: name} }

// NotInjected begins the Detail of the KindFaultEnd that closes the window
// of a fault that could not be injected.
const NotInjected = "not injected"

// Healed reports whether e is the heal of an injected fault: a
// KindFaultEnd that does not close a fault that was not injected.
func Healed(e Event) bool {
	return e.Kind == KindFaultEnd && !strings.HasPrefix(e.Detail, NotInjected)
}

// IsProgress reports whether e shows a workload getting something done: a
// successful operation, an acquired holding, or an accepted fenced write.
func IsProgress(e Event) bool {
	if e.Client == Nemesis {
		return false
	}
	switch e.Kind {
	case KindOK, KindAcquired, KindFencedOK:
		return true
	}
	return false
}

// ClientLog records the events of one client. Safe for concurrent use.
type ClientLog struct {
	r    *Recorder
	name string
}

// Name returns the client's name.
func (c *ClientLog) Name() string { return c.name }

// Event records e under this client's name.
func (c *ClientLog) Event(e Event) { e.Client = c.name; c.r.Add(e) }

// Invoke records the start of operation fn on key with input arg and returns
// the pending operation, to be completed once with OK, Fail or Unknown.
func (c *ClientLog) Invoke(fn Fn, key string, arg int64) *Op {
	return c.InvokeValue(fn, key, arg, 0)
}

// InvokeValue is Invoke for operations with a second input, such as the new
// value of a compare-and-set; failures and unknown outcomes repeat it.
func (c *ClientLog) InvokeValue(fn Fn, key string, arg, value int64) *Op {
	o := &Op{c: c, id: c.r.NewOpID(), fn: fn, key: key, arg: arg, in: value}
	c.r.Add(Event{Client: c.name, Kind: KindInvoke, Op: o.id, Fn: fn, Key: key, Arg: arg, Value: value})
	return o
}

// Acquired records that the client holds key with token, in mode.
func (c *ClientLog) Acquired(key string, token int64, mode string) {
	c.r.Add(Event{Client: c.name, Kind: KindAcquired, Key: key, Token: token, Mode: mode})
}

// Released records that the client is about to release key.
func (c *ClientLog) Released(key string, token int64) {
	c.r.Add(Event{Client: c.name, Kind: KindReleased, Key: key, Token: token})
}

// Lost records that the client's holding of key may be gone, and why.
func (c *ClientLog) Lost(key string, token int64, why string) {
	c.r.Add(Event{Client: c.name, Kind: KindLost, Key: key, Token: token, Detail: why})
}

// Fenced records a fenced write with token: accepted (writing value) or
// rejected.
func (c *ClientLog) Fenced(key string, token, value int64, accepted bool, detail string) {
	k := KindFencedRejected
	if accepted {
		k = KindFencedOK
	}
	c.r.Add(Event{Client: c.name, Kind: k, Key: key, Token: token, Value: value, Detail: detail})
}

// Op is a pending operation of a client.
type Op struct {
	c   *ClientLog
	id  int64
	fn  Fn
	key string
	arg int64
	in  int64
}

// OK records that the operation succeeded with output value.
func (o *Op) OK(value int64) { o.OKKey(o.key, value) }

// OKKey records success with an output key (for example the item a take
// returned) and value.
func (o *Op) OKKey(key string, value int64) {
	o.c.r.Add(Event{Client: o.c.name, Kind: KindOK, Op: o.id, Fn: o.fn, Key: key, Arg: o.arg, Value: value})
}

// Fail records that the operation definitely did not take effect.
func (o *Op) Fail(detail string) {
	o.c.r.Add(Event{Client: o.c.name, Kind: KindFail, Op: o.id, Fn: o.fn, Key: o.key, Arg: o.arg, Value: o.in, Detail: detail})
}

// Unknown records that the outcome is ambiguous.
func (o *Op) Unknown(detail string) {
	o.c.r.Add(Event{Client: o.c.name, Kind: KindUnknown, Op: o.id, Fn: o.fn, Key: o.key, Arg: o.arg, Value: o.in, Detail: detail})
}

// HoldingNow reports which of clients hold something now (their latest
// holding event is an acquired one), and whether anybody ever acquired
// anything. It scans back from the latest event, without copying.
func (r *Recorder) HoldingNow(clients []string) (map[string]bool, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	want := map[string]bool{}
	for _, c := range clients {
		want[c] = true
	}
	holding, decided, has := map[string]bool{}, map[string]bool{}, false
	for i := len(r.events) - 1; i >= 0 && (len(decided) < len(want) || !has); i-- {
		e := r.events[i]
		switch e.Kind {
		case KindAcquired, KindReleased, KindLost:
		default:
			continue
		}
		has = has || e.Kind == KindAcquired
		if want[e.Client] && !decided[e.Client] {
			decided[e.Client] = true
			holding[e.Client] = e.Kind == KindAcquired
		}
	}
	return holding, has
}

// HoldingChangedAt returns the time of client's latest holding event
// (acquired, released or lost), or 0 when it has none.
func (r *Recorder) HoldingChangedAt(client string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.events) - 1; i >= 0; i-- {
		e := r.events[i]
		if e.Client != client {
			continue
		}
		switch e.Kind {
		case KindAcquired, KindReleased, KindLost:
			return e.Time
		}
	}
	return 0
}

// Pending reports whether client has an operation fn pending now: its
// latest event of fn is the call (KindInvoke), not yet an outcome (OK,
// Fail or Unknown). It scans back from the latest event, without copying.
func (r *Recorder) Pending(client string, fn Fn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.events) - 1; i >= 0; i-- {
		e := r.events[i]
		if e.Client != client || e.Fn != fn {
			continue
		}
		switch e.Kind {
		case KindInvoke:
			return true
		case KindOK, KindFail, KindUnknown:
			return false
		}
	}
	return false
}
