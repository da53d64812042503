package leader

import (
	"fmt"
	"sync"
	"time"
)

// EventType is one step of a participant's lifecycle, named after ZooKeeper's
// LeaderElectionSupport recipe.
//
// For one Campaign the hook sees, in this order:
//
//	Start
//	OfferStart OfferComplete                     our node is created
//	( DetermineStart DetermineComplete
//	  ReadyStart ReadyComplete )*                 in line, watching the one node ahead
//	[ OfferStart OfferComplete ... ]              again if the session was lost or the
//	                                              owner check failed (a new node)
//	DetermineStart DetermineComplete
//	ElectedStart ElectedComplete                  Campaign returns the term
//	StopStart StopComplete                        the term ended (Release, or loss)
//
// or, when Campaign returns an error instead of a term (ctx done, session
// closed, ...), Failed ends the sequence (no Stop events follow). A new
// Campaign on the same Election starts again with Start. A Campaign refused
// before it starts (bad arguments, ErrCampaigning) emits nothing.
type EventType int

// Lifecycle events.
const (
	// EventStart: Campaign was called.
	EventStart EventType = iota + 1
	// EventOfferStart: our node is about to be created (1 create). When
	// the core creates a new node by itself (the session was lost while
	// waiting), this is reported after that create, right before its
	// EventOfferComplete.
	EventOfferStart
	// EventOfferComplete: our node exists (Event.Node). The core creates
	// and lists in one step, so this is reported when the contenders are
	// first ordered, right before EventDetermineStart.
	EventOfferComplete
	// EventDetermineStart: the contenders are being ordered to find our
	// place (after a listing or after the node ahead of us went).
	EventDetermineStart
	// EventDetermineComplete: our place is known (Event.Position, 0 =
	// first).
	EventDetermineComplete
	// EventElectedStart: we are first in line; the owner check follows (1
	// getData, which also sets the term's watch: our node exists and its
	// ephemeral owner is our current session).
	EventElectedStart
	// EventElectedComplete: the check passed; Campaign returns the term.
	EventElectedComplete
	// EventReadyStart: we are not first; we will watch the one node right
	// ahead of us (Event.Watch).
	EventReadyStart
	// EventReadyComplete: we are in line and wait for Event.Watch to go:
	// with a data watch on it (1 getData, or none when the session already
	// watches it), or, when more than two nodes were ahead at the last
	// listing and one of them has gone since, after listing again (1
	// getChildren), which reports Determine and Ready events again.
	EventReadyComplete
	// EventFailed: Campaign returns an error (Event.Err) and no term.
	EventFailed
	// EventStopStart: the term ended: Release was called (Event.Err is nil)
	// or leadership may be lost (Event.Err is the term context's cause).
	EventStopStart
	// EventStopComplete: our node is deleted, or its deletion was handed to
	// the session's background retries, or it went with its session.
	EventStopComplete
)

var eventNames = [...]string{
	EventStart: "start", EventOfferStart: "offer-start", EventOfferComplete: "offer-complete",
	EventDetermineStart: "determine-start", EventDetermineComplete: "determine-complete",
	EventElectedStart: "elected-start", EventElectedComplete: "elected-complete",
	EventReadyStart: "ready-start", EventReadyComplete: "ready-complete", EventFailed: "failed",
	EventStopStart: "stop-start", EventStopComplete: "stop-complete",
}

func (t EventType) String() string {
	if t > 0 && int(t) < len(eventNames) {
		return eventNames[t]
	}
	return fmt.Sprintf("event(%d)", int(t))
}

// Event is one lifecycle step of an Election (see EventType for the order).
type Event struct {
	Type EventType
	At   time.Time // when the step happened (not when the hook runs)
	// Node is the full path of our node, once offered ("" before).
	Node string
	// Position is our place in line for EventDetermineComplete (0 = first).
	Position int
	// Watch is the full path of the node we watch (EventReadyStart,
	// EventReadyComplete).
	Watch string
	// Err is why Campaign failed (EventFailed) or why the term ended
	// (EventStopStart after a loss: errors.Is a recipes sentinel such as
	// recipes.ErrSuspended or recipes.ErrSessionLost).
	Err error
	// Dropped is the number of events dropped right before this one
	// because the hook fell behind: at most EventQueueLimit events wait
	// for the hook, and when one more comes the oldest waiting one is
	// dropped. 0 when the sequence is complete up to this event.
	Dropped int
}

// EventQueueLimit is the number of events that wait for a slow hook (see
// WithEvents); beyond it the oldest waiting event is dropped and counted in
// the next delivered Event's Dropped.
const EventQueueLimit = 256

const eventQueueLimit = EventQueueLimit

// dispatcher delivers events to the hook in emit order on a goroutine that
// exists only while events are queued, so the election never waits for the
// hook and an idle Election owns no goroutine. At most eventQueueLimit
// events wait; beyond that the oldest waiting one is dropped and counted.
type dispatcher struct {
	fn      func(Event)
	mu      sync.Mutex
	queue   []Event
	dropped int // dropped since the last delivered event
	running bool
}

func newDispatcher(fn func(Event)) *dispatcher {
	if fn == nil {
		return nil
	}
	return &dispatcher{fn: fn}
}

// emit queues ev; it never blocks on the hook.
func (d *dispatcher) emit(ev Event) {
	if d == nil {
		return
	}
	if ev.At.IsZero() {
		ev.At = time.Now()
	}
	d.mu.Lock()
	if len(d.queue) >= eventQueueLimit {
		// Drop the oldest waiting event; copy down rather than reslice so
		// the backing array does not creep forward and grow.
		d.queue = append(d.queue[:0], d.queue[1:]...)
		d.dropped++
	}
	d.queue = append(d.queue, ev)
	if d.running {
		d.mu.Unlock()
		return
	}
	d.running = true
	d.mu.Unlock()
	go d.drain()
}

func (d *dispatcher) drain() {
	for {
		d.mu.Lock()
		if len(d.queue) == 0 {
			d.queue = nil
			d.running = false
			d.mu.Unlock()
			return
		}
		ev := d.queue[0]
		ev.Dropped, d.dropped = d.dropped, 0
		d.queue[0] = Event{}
		d.queue = d.queue[1:]
		d.mu.Unlock()
		d.fn(ev)
	}
}
