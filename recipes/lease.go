package recipes

import (
	"fmt"
	"time"
)

// The lease is the Session's own bound on its session's life, on the
// client's monotonic clock. The server expires a session no earlier than
// one negotiated timeout after the last frame it received from us. A reply
// to a request (or a ping) proves the server received that request, so the
// session cannot expire before the request's send time plus the timeout.
// The tap (tap.go) reports, for every reply, when its request was sent, and
// the negotiated timeout from every connect response; watch events prove
// nothing about our sends and renew nothing. The lease adds no request: it
// rides on the replies and on go-zookeeper's pings (every third of the
// timeout) that flow anyway.
//
// At renewed + timeout - margin every holding is cancelled (ErrLeaseExpired);
// at renewed + timeout, if nothing was renewed meanwhile, the Session
// reports StateLost itself (preceded by StateSuspended while go-zookeeper
// still believed the connection alive). One timer per Session drives both.

// minLeaseMargin is the floor of DefaultLeaseMargin.
const minLeaseMargin = 100 * time.Millisecond

// DefaultLeaseMargin returns the lease margin used for a negotiated session
// timeout when WithLeaseMargin is not given: a tenth of the timeout, at
// least 100ms, at most half the timeout (1s for the default 10s timeout,
// 300ms for 3s). It covers, with room to spare:
//   - timer lateness and scheduling: the lease timer's goroutine may run
//     late on a loaded machine; a CPU-throttled container can stall a
//     whole CFS period (100ms), far more than Go's timer slack or a GC pause;
//   - clock rate differences: client and server measure the timeout each on
//     their own monotonic clock; crystals and NTP slewing keep the rates
//     within 0.1% of each other, a thousandth of the timeout;
//   - the holder's own reaction: a holder that checks its Context and then
//     acts has the margin for the action to take effect.
//
// The margin costs nothing while replies flow: pings renew the lease every
// third of the timeout, so holdings end early only when no reply came for
// most of the timeout.
func DefaultLeaseMargin(timeout time.Duration) time.Duration {
	return min(max(timeout/10, minLeaseMargin), timeout/2)
}

// lease is the Session's lease state, guarded by Session.mu.
type lease struct {
	timeout time.Duration // negotiated; 0 until the first handshake was read
	sid     int64         // the session of the last handshake
	renewed time.Time     // send time of the newest frame whose reply came back
	timer   *time.Timer   // one per Session, created at the first handshake
	armedAt time.Time     // when timer fires; zero when not armed
	expired bool          // holdings were cancelled; cleared by a renewal in time
	down    bool          // the lease reported Suspended while go-zookeeper had the session
	cause   error         // what holdings were cancelled with at the last expiry
	subs    map[uint64]func(error)
	nextSub uint64
}

// margin returns the lease margin for the negotiated timeout.
func (s *Session) margin() time.Duration {
	if s.opts.leaseMarginSet {
		return s.opts.leaseMargin
	}
	return DefaultLeaseMargin(s.lease.timeout)
}

// leaseEndLocked returns the lease deadline: renewed + timeout - margin.
func (s *Session) leaseEndLocked() time.Time {
	return s.lease.renewed.Add(s.lease.timeout - s.margin())
}

// LeaseDeadline returns the moment, on this process's monotonic clock (use
// time.Until), at which every holding of the session is cancelled with
// ErrLeaseExpired unless a reply renews the lease before: the send time of
// the newest request or ping the server has answered, plus the negotiated
// session timeout, minus the lease margin. The server cannot expire the
// session before that moment plus the margin. It returns the zero Time
// before the first session was established. It costs no request.
func (s *Session) LeaseDeadline() time.Time {
	if s == nil {
		return time.Time{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lease.timeout == 0 {
		return time.Time{}
	}
	return s.leaseEndLocked()
}

// NegotiatedTimeout returns the session timeout the server granted at the
// last handshake (it clamps the requested one, see SessionTimeout, to its
// limits), or 0 before the first session.
func (s *Session) NegotiatedTimeout() time.Duration {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lease.timeout
}

// OnLeaseExpired registers f to be called once, with a cause that errors.Is
// ErrLeaseExpired, when the session's lease runs out (see LeaseDeadline), or
// at once if it already has. f runs on the Session's timer goroutine and
// must not block; cancelling a context is the intended use. stop removes
// the registration. Holdings register themselves; this is for other
// session-bound resources.
func (s *Session) OnLeaseExpired(f func(cause error)) (stop func()) {
	s.mu.Lock()
	if s.closing || f == nil {
		s.mu.Unlock()
		return func() {}
	}
	if l := &s.lease; l.timeout > 0 && (l.expired || !time.Now().Before(s.leaseEndLocked())) {
		cause := l.cause
		if !l.expired || cause == nil {
			cause = s.expiryCauseLocked(time.Now())
		}
		s.mu.Unlock()
		f(cause)
		return func() {}
	}
	if s.lease.subs == nil {
		s.lease.subs = make(map[uint64]func(error))
	}
	k := s.lease.nextSub
	s.lease.nextSub++
	s.lease.subs[k] = f
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.lease.subs, k)
		s.mu.Unlock()
	}
}

func (s *Session) expiryCauseLocked(now time.Time) error {
	return fmt.Errorf("%w: session 0x%x: nothing sent in the last %v was answered (negotiated timeout %v, margin %v)",
		ErrLeaseExpired, s.lease.sid, now.Sub(s.lease.renewed).Round(time.Millisecond), s.lease.timeout, s.margin())
}

// leaseHandshake is called by the tap with a connect response that granted
// session sid with timeout; the connect request was sent at sent.
func (s *Session) leaseHandshake(sent time.Time, timeout time.Duration, sid int64) {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return
	}
	if sid != s.lease.sid {
		// A new session: the old one's renewals say nothing about it.
		s.lease.sid, s.lease.renewed = sid, sent
	}
	if timeout != s.lease.timeout {
		s.lease.timeout = timeout
		s.lease.armedAt = time.Time{} // the deadline may have moved earlier
	}
	out := s.renewLocked(time.Now(), sent)
	hooks := s.applyLocked(out)
	s.mu.Unlock()
	s.runHooks(hooks, out)
}

// leaseRenew is called by the tap when a reply to a frame sent at sent
// arrived.
func (s *Session) leaseRenew(sent time.Time) {
	s.mu.Lock()
	if s.closing || s.lease.timeout == 0 {
		s.mu.Unlock()
		return
	}
	now := time.Now()
	var before time.Time
	if s.opts.observer != nil {
		before = s.leaseEndLocked()
	}
	out := s.renewLocked(now, sent)
	ev := s.leaseEventLocked(now, before, false)
	hooks := s.applyLocked(out)
	s.mu.Unlock()
	s.observeLease(ev)
	s.runHooks(hooks, out)
}

// renewLocked moves the lease forward to sent, re-arms the timer and
// returns the state change to report: StateReconnected when the lease had
// reported the session suspended or lost while go-zookeeper kept the
// connection, and the lease is valid again.
func (s *Session) renewLocked(now, sent time.Time) []StateChange {
	l := &s.lease
	if sent.After(l.renewed) {
		l.renewed = sent
	}
	var out []StateChange
	if now.Before(s.leaseEndLocked()) {
		l.expired = false
		if l.down && (s.state == StateSuspended || s.state == StateLost) {
			out = append(out, StateChange{State: StateReconnected, SessionID: s.id, At: now})
		}
		l.down = false
	}
	s.armLocked(now)
	return out
}

// armLocked makes sure the timer fires no later than the next lease event:
// the lease deadline, or (once expired) the moment to report the session
// lost. A timer already set to fire earlier is left alone: leaseTick
// re-arms it, so renewals (one per reply) cost no timer operation.
func (s *Session) armLocked(now time.Time) {
	l := &s.lease
	if l.timeout == 0 || s.closing {
		return
	}
	var at time.Time
	switch {
	case !l.expired:
		at = s.leaseEndLocked()
	case s.state == StateConnected || s.state == StateReconnected || s.state == StateSuspended:
		at = l.renewed.Add(l.timeout)
	default:
		return
	}
	if !l.armedAt.IsZero() && !at.Before(l.armedAt) {
		return
	}
	l.armedAt = at
	if l.timer == nil {
		l.timer = time.AfterFunc(at.Sub(now), s.leaseTick)
		return
	}
	l.timer.Reset(at.Sub(now))
}

// leaseTick runs on the timer: it cancels the holdings once the lease
// deadline has passed, reports the session lost once a whole timeout has
// passed without renewal, and re-arms the timer.
func (s *Session) leaseTick() {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return
	}
	l := &s.lease
	now := time.Now()
	l.armedAt = time.Time{}
	var subs []func(error)
	var out []StateChange
	var ev LeaseEvent
	if !l.expired && !now.Before(s.leaseEndLocked()) {
		ev = s.leaseEventLocked(now, s.leaseEndLocked(), true)
		l.expired = true
		l.cause = s.expiryCauseLocked(now)
		for k, f := range l.subs {
			subs = append(subs, f)
			delete(l.subs, k)
		}
		s.log.Warn("recipes: lease expired, holdings cancelled", "session", fmt.Sprintf("0x%x", l.sid), "err", l.cause)
	}
	if l.expired && !now.Before(l.renewed.Add(l.timeout)) {
		switch s.state {
		case StateConnected, StateReconnected:
			// go-zookeeper has not noticed (a blocked write, or frames
			// that are not replies): suspend first, as a disconnect would.
			out = append(out, StateChange{State: StateSuspended, SessionID: s.id, At: now})
			l.down = true
			fallthrough
		case StateSuspended:
			out = append(out, StateChange{State: StateLost, SessionID: s.id, At: now})
		}
	}
	s.armLocked(now)
	hooks := s.applyLocked(out)
	cause := l.cause
	s.mu.Unlock()
	s.observeLease(ev)
	for _, f := range subs {
		f(cause)
	}
	s.runHooks(hooks, out)
}

// stopLeaseLocked stops the timer; called by Close.
func (s *Session) stopLeaseLocked() {
	if s.lease.timer != nil {
		s.lease.timer.Stop()
	}
	s.lease.subs = nil
}
