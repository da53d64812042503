package recipes

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Observer sees what a Session does, for metrics and logs (WithObserver):
// every ZooKeeper request it answers, every holding acquired and ended,
// every state change, and the lease's renewals by replies and its expiry
// (a connect handshake also renews the lease, without an event). The
// methods are called concurrently, from go-zookeeper's goroutines (calls
// and lease renewals), the lease timer, the goroutine that acquires a
// holding or whose cancellation ends it, and the caller of Close (the
// last state changes), never with a lock of the Session held: they must
// be safe for concurrent use; they may read the Session (State, ID,
// LeaseDeadline), but must not block or send requests. Embed BaseObserver to implement only some of them.
//
// Invariant: without an observer (the default) the Session takes none of
// these measurements: each site costs a nil check, no clock read and no
// allocation (BenchmarkTapObserver and BenchmarkHoldingObserver in
// observe_test.go measure it).
type Observer interface {
	// ObserveCall: one ZooKeeper request was answered, or its connection
	// ended before the answer (Err wraps zk.ErrConnectionClosed).
	ObserveCall(CallEvent)
	// ObserveHolding: a holding was acquired, or has ended.
	ObserveHolding(HoldingEvent)
	// ObserveState: the Session's state changed (the StateChange that
	// Subscribe and OnStateChange deliver).
	ObserveState(StateChange)
	// ObserveLease: the lease was renewed by a reply, or ran out.
	ObserveLease(LeaseEvent)
}

// BaseObserver implements Observer and ignores everything; embed it in an
// observer that needs only some of the methods.
type BaseObserver struct{}

func (BaseObserver) ObserveCall(CallEvent)       {}
func (BaseObserver) ObserveHolding(HoldingEvent) {}
func (BaseObserver) ObserveState(StateChange)    {}
func (BaseObserver) ObserveLease(LeaseEvent)     {}

// CallEvent is one ZooKeeper request seen on the wire: every request the
// Session's connections send (the recipes', go-zookeeper's own auth and
// watch re-registration, and raw calls through Session.Conn), except pings,
// whose replies renew the lease instead (LeaseEvent), and the connect
// handshake, which renews it without an event.
// A call that go-zookeeper fails without sending it (no connection) is
// not a request and is not seen.
type CallEvent struct {
	Op        string        // the request's op: "create", "getData", "getChildren2", "multi", ... (OpName)
	Path      string        // the request's path; "" for ops without one (multi, setWatches, setAuth, closeSession)
	SessionID int64         // the session of the connection it was sent on (0 before the handshake was read)
	Duration  time.Duration // from the write of the request to the read of its reply (or the connection's end)
	// Err is nil for a success, the server's answer (zk.ErrNoNode,
	// zk.ErrNodeExists, ...: errors.Is works; a code go-zookeeper has no
	// error for wraps zk.ErrUnknown and names the code), or
	// zk.ErrConnectionClosed when the connection ended before the reply.
	Err error
}

// HoldingPhase says what a HoldingEvent reports.
type HoldingPhase int

const (
	HoldingAcquired HoldingPhase = iota + 1 // the holding was handed to its holder
	HoldingEnded                            // its Context is done
)

func (p HoldingPhase) String() string {
	switch p {
	case HoldingAcquired:
		return "acquired"
	case HoldingEnded:
		return "ended"
	}
	return fmt.Sprintf("phase(%d)", int(p))
}

// HoldingEvent is one holding acquired or ended: every Holding of the
// contender core (lock.Mutex and its leases, rwlock, leader terms,
// semaphores, lock.MultiMutex, partition) and the holdings that other
// recipes report with Session.ObserveHeld (queue claims).
type HoldingEvent struct {
	Phase     HoldingPhase
	Kind      string // "lock", "read", "write", "lease", "latch" (the node's Role), "claim"
	Path      string // the holding's node
	SessionID int64  // the session it was acquired under
	// Waited (Acquired): from the call that acquired it (Acquire,
	// TryAcquire, Enter; queue.Claim) until it held, retries included.
	// Enter's holdings (a semaphore's lease nodes) count the create only:
	// they are reported when their node is made, before the semaphore
	// counts them (a lease that then finds no room ends "released").
	Waited time.Duration
	// Held (Ended): from acquisition until its Context was done.
	Held time.Duration
	// Cause (Ended): context.Cause of the holding's Context; errors.Is
	// ErrReleased when its holder gave it up, else why it was lost.
	Cause error
}

// Lost reports whether e ends a holding that its holder did not give up.
func (e HoldingEvent) Lost() bool { return e.Phase == HoldingEnded && !errors.Is(e.Cause, ErrReleased) }

// LeaseEvent is one movement of the Session's lease (see LeaseDeadline).
type LeaseEvent struct {
	// Expired: the lease ran out and every holding was cancelled with
	// ErrLeaseExpired; otherwise a reply renewed the lease.
	Expired   bool
	SessionID int64
	// Remaining is how much of the lease was left just before the event:
	// at a renewal, the time the holdings still had; at an expiry, <= 0
	// (how late the lease timer ran).
	Remaining time.Duration
	Deadline  time.Time     // the lease deadline after the event
	Timeout   time.Duration // the negotiated session timeout
	Margin    time.Duration // the lease margin
}

// WithObserver sets the Session's observer (nil: none, the default).
// Combine several with Observers.
func WithObserver(o Observer) Option {
	return func(opts *options) { opts.observer = o }
}

// Observers returns an Observer that hands every event to each of obs in
// turn (nil entries are skipped), or nil when there is none.
func Observers(obs ...Observer) Observer {
	var all multiObserver
	for _, o := range obs {
		if o != nil {
			all = append(all, o)
		}
	}
	switch len(all) {
	case 0:
		return nil
	case 1:
		return all[0]
	}
	return all
}

type multiObserver []Observer

func (m multiObserver) ObserveCall(e CallEvent) {
	for _, o := range m {
		o.ObserveCall(e)
	}
}

func (m multiObserver) ObserveHolding(e HoldingEvent) {
	for _, o := range m {
		o.ObserveHolding(e)
	}
}

func (m multiObserver) ObserveState(e StateChange) {
	for _, o := range m {
		o.ObserveState(e)
	}
}

func (m multiObserver) ObserveLease(e LeaseEvent) {
	for _, o := range m {
		o.ObserveLease(e)
	}
}

// Observer returns the Session's observer, nil when none is set (or for a
// nil Session). A recipe that measures something only for the observer
// checks it first, so an unobserved Session pays nothing.
func (s *Session) Observer() Observer {
	if s == nil {
		return nil
	}
	return s.opts.observer
}

// ObserveHeld reports a holding that a recipe built outside the contender
// core (queue claims): HoldingAcquired now, with waited, and HoldingEnded
// once held is done, with its cause. held is the holding's lifetime
// context. Nothing happens without an observer. No ZooKeeper calls.
func (s *Session) ObserveHeld(held context.Context, kind, path string, sid int64, waited time.Duration) {
	o := s.Observer()
	if o == nil || held == nil {
		return
	}
	at := time.Now()
	o.ObserveHolding(HoldingEvent{Phase: HoldingAcquired, Kind: kind, Path: path, SessionID: sid, Waited: waited})
	context.AfterFunc(held, func() {
		o.ObserveHolding(HoldingEvent{Phase: HoldingEnded, Kind: kind, Path: path, SessionID: sid,
			Held: time.Since(at), Cause: context.Cause(held)})
	})
}

// observeHolding reports h, acquired for spec (whose begun the core set
// when observed).
func (s *Session) observeHolding(spec *Spec, h *Holding) {
	if s.opts.observer == nil {
		return
	}
	s.ObserveHeld(h.ctx, spec.Role.String(), h.node.path, h.node.sid, time.Since(spec.begun))
}

// observeStates hands state changes to the observer.
func (s *Session) observeStates(out []StateChange) {
	if o := s.opts.observer; o != nil {
		for _, c := range out {
			o.ObserveState(c)
		}
	}
}

// leaseEventLocked describes the lease for the observer, now, with before
// the deadline before the event; the zero LeaseEvent without an observer.
// leaseEnd says whether a LeaseEvent reports the lease's expiry.
type leaseEnd bool

const (
	leaseRenewed leaseEnd = false // a renewal or a change of deadline
	leaseExpired leaseEnd = true  // the deadline passed: holdings were cancelled
)

func (s *Session) leaseEventLocked(now, before time.Time, expired leaseEnd) LeaseEvent {
	if s.opts.observer == nil {
		return LeaseEvent{}
	}
	return LeaseEvent{Expired: bool(expired), SessionID: s.lease.sid, Remaining: before.Sub(now),
		Deadline: s.leaseEndLocked(), Timeout: s.lease.timeout, Margin: s.margin()}
}

// observeLease hands ev to the observer unless it is the zero LeaseEvent.
func (s *Session) observeLease(ev LeaseEvent) {
	if o := s.opts.observer; o != nil && ev.Timeout != 0 {
		o.ObserveLease(ev)
	}
}
