package recipes

import (
	"fmt"
	"time"

	"github.com/zkrecipes/zkrecipes/internal/hooks"
)

// The lease is the Session's own bound on its session's life, on the
// client's monotonic clock. The tap (internal/tap) reports, for every reply, when
// its request was sent, and the negotiated timeout from every connect
// response; watch events prove nothing about our sends and renew nothing.
//
// What the bound rests on (ZooKeeper 3.8 and 3.9 alike; docs/design.md
// derives it term by term from the server's code):
//   - Only the leader expires global sessions (every session that can own
//     an ephemeral node). It expires a session in the first tick bucket
//     after its last touch plus the timeout T, never earlier.
//   - A follower touches our session in a table of its own; the leader
//     touches it only when it reads the follower's answer to one of its
//     pings, which it sends every tick/2 (Q).
//   - A follower cut off from its leader goes on answering our requests
//     and pings until it has heard nothing from the leader for syncLimit x
//     tickTime (S), then closes its clients' connections; the leader drops
//     a follower it has not heard from for S the same way.
//   - When only what the follower sends is cut, the leader's pings go on
//     reaching it until the leader's TCP retransmission timer fires, at
//     most R after the first ping the leader sent after its last read of
//     the follower (R: WithQuorumRetransmit, DefaultQuorumRetransmit).
//   - Our requests reach the server at least every P: the Session pings
//     every P itself when go-zookeeper's pings (every T/3) are too rare.
//   - A frozen server (a stop-the-world pause: its timers stop, and at
//     its thaw it answers what was queued before its checks run) renews
//     nothing past what its terms cover: every request answered at the
//     thaw was sent while the first one after the freeze, at most P in,
//     waited, so a reply renews from no later than Stall = S + R - P
//     after the oldest request then unanswered (LeaseBudget.Stall), and
//     for S after the first such capped reply, a request sent meanwhile
//     renews from no later than its point, even when it is capped itself:
//     a thawed server stops answering within S of its running time
//     (docs/design.md, "Server freezes").
//
// So the newest reply we have, to a request sent at r, proves only that
// the leader touched the session at r - Λ or later, Λ = S + Q + R + P:
// the lag (LeaseBudget.Lag). The leader cannot expire the session before r - Λ
// + T. At r + T - Λ - m (m: the margin) every holding is cancelled
// (ErrLeaseExpired); at r + T - Λ, if nothing was renewed meanwhile, the
// Session reports StateLost itself (preceded by StateSuspended while
// go-zookeeper still believed the connection alive). One timer per Session
// drives both. On a standalone server (syncLimit 0), the server that
// answers is the one that expires, Λ is 0 and go-zookeeper's pings suffice.

// lease is the Session's lease state, guarded by Session.mu.
type lease struct {
	timeout   time.Duration // negotiated; 0 until the first handshake was read
	budget    LeaseBudget   // of timeout; valid when budgetErr is nil
	budgetErr error         // the timeout leaves no lease (ErrLeaseTooShort)
	sid       int64         // the session of the last handshake
	renewed   time.Time     // send time of the newest frame whose reply came back
	timer     *time.Timer   // one per Session, created at the first handshake
	armedAt   time.Time     // when timer fires; zero when not armed
	expired   bool          // holdings were cancelled; cleared by a renewal in time
	down      bool          // the lease reported Suspended while go-zookeeper had the session
	cause     error         // what holdings were cancelled with at the last expiry
	subs      map[uint64]func(error)
	nextSub   uint64
}

// margin returns the lease margin for the negotiated timeout.
func (s *Session) margin() time.Duration {
	if s.opts.leaseMarginSet {
		return s.opts.leaseMargin
	}
	return DefaultLeaseMargin(s.lease.timeout)
}

// leaseEndLocked returns the lease deadline: renewed + T - Λ - margin.
// With no lease possible (budgetErr), it is renewed itself: holdings end at
// once.
func (s *Session) leaseEndLocked() time.Time {
	if s.lease.budgetErr != nil {
		return s.lease.renewed
	}
	return s.lease.renewed.Add(s.lease.budget.Hold)
}

// leaseLostLocked returns the earliest moment the leader may have expired
// the session: renewed + T - Λ.
func (s *Session) leaseLostLocked() time.Time {
	return s.lease.renewed.Add(s.lease.timeout - s.lease.budget.Lag)
}

// setTimeoutLocked records a newly negotiated timeout and its budget.
func (s *Session) setTimeoutLocked(timeout time.Duration) {
	s.lease.timeout = timeout
	s.lease.budget, s.lease.budgetErr = NewLeaseBudget(timeout, s.margin(), s.opts.tick, s.opts.syncLimit, s.opts.retransmit)
	if s.lease.budgetErr == nil && s.opts.syncLimit > 0 {
		s.lease.budget = dropLeaseTerms(s.lease.budget, s.opts.tick, s.opts.retransmit)
	}
	if s.lease.budgetErr != nil {
		s.log.Warn("recipes: no holding can be kept on this session", "err", s.lease.budgetErr)
	}
}

// dropLeaseTerms removes from b's lag the terms the test hook
// hooks.SetLeaseDrop names (Q = tick/2, P = b.Ping, R = retransmit),
// lengthening Hold by as much; the ping period stays. Without the build
// tag zkrecipes_hooks it returns b unchanged (hooks.LeaseDrop is constant
// there). Pure.
func dropLeaseTerms(b LeaseBudget, tick, retransmit time.Duration) LeaseBudget {
	q, p, r := hooks.LeaseDrop()
	if q {
		b.Lag -= tick / 2
		b.Hold += tick / 2
	}
	if p {
		b.Lag -= b.Ping
		b.Hold += b.Ping
	}
	if r {
		b.Lag -= retransmit
		b.Hold += retransmit
	}
	return b
}

// LeaseBudget returns the lease's division of the negotiated timeout, or
// an error wrapping ErrLeaseTooShort (and ErrBadArgument) when the timeout
// leaves no lease, in which case every acquisition fails at once. Before
// the first handshake it returns the zero budget and nil. It costs no
// request.
func (s *Session) LeaseBudget() (LeaseBudget, error) {
	if s == nil {
		return LeaseBudget{}, ErrNilSession
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lease.budget, s.lease.budgetErr
}

// checkLease fails with the budget's error when no holding can be kept.
func (s *Session) checkLease() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lease.timeout > 0 && s.lease.budgetErr != nil {
		return s.lease.budgetErr
	}
	return nil
}

// leasePing returns the interval at which the tap must ping on its own, 0
// when go-zookeeper's pings suffice.
// leaseStall returns the budget's Stall and S (the window a stall's cap
// holds for later requests), with ok false on a standalone server,
// without a lease, or under hooks.SetLeaseStallDrop.
func (s *Session) leaseStall() (stall, window time.Duration, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lease.budgetErr != nil || s.opts.syncLimit == 0 || hooks.LeaseStallDrop() {
		return 0, 0, false
	}
	return s.lease.budget.Stall, s.opts.tick * time.Duration(s.opts.syncLimit), true
}

func (s *Session) leasePing() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lease.budgetErr != nil {
		return 0
	}
	return s.lease.budget.Ping
}

// LeaseDeadline returns the moment, on this process's monotonic clock (use
// time.Until), at which every holding of the session is cancelled with
// ErrLeaseExpired unless a reply renews the lease before: the send time of
// the newest request or ping the server has answered, plus the negotiated
// session timeout, minus the lag and the lease margin (LeaseBudget). The
// lag covers a server that answers while cut off from the leader, which
// alone expires sessions (see WithEnsembleTiming and
// WithQuorumRetransmit); so the ensemble cannot
// expire the session before that moment plus the margin, as long as the
// ensemble's timing is no longer than WithEnsembleTiming and
// WithQuorumRetransmit say. It returns
// the zero Time before the first session was established. It costs no
// request.
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
	if err := s.lease.budgetErr; err != nil {
		return fmt.Errorf("%w: %w", ErrLeaseExpired, err)
	}
	return fmt.Errorf("%w: session 0x%x: nothing sent in the last %v was answered (negotiated timeout %v, lag %v, margin %v)",
		ErrLeaseExpired, s.lease.sid, now.Sub(s.lease.renewed).Round(time.Millisecond), s.lease.timeout, s.lease.budget.Lag, s.margin())
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
	var subs []func(error)
	if timeout != s.lease.timeout {
		s.setTimeoutLocked(timeout)
		s.lease.armedAt = time.Time{} // the deadline may have moved earlier
		if s.lease.budgetErr != nil {
			// No lease at this timeout: holdings end now.
			subs = s.takeSubsLocked()
		}
	}
	out := s.renewLocked(time.Now(), sent)
	hooks := s.applyLocked(out)
	var cause error
	if len(subs) > 0 {
		cause = s.expiryCauseLocked(time.Now())
	}
	s.mu.Unlock()
	for _, f := range subs {
		f(cause)
	}
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
	ev := s.leaseEventLocked(now, before, leaseRenewed)
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
	if l.budgetErr != nil || now.Before(s.leaseEndLocked()) {
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
	if l.timeout == 0 || s.closing || l.budgetErr != nil {
		return // no lease (budgetErr): go-zookeeper alone reports the session's state
	}
	var at time.Time
	switch {
	case !l.expired:
		at = s.leaseEndLocked()
	case s.state == StateConnected || s.state == StateReconnected || s.state == StateSuspended:
		at = s.leaseLostLocked()
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
	if l.budgetErr != nil {
		s.mu.Unlock()
		return
	}
	var subs []func(error)
	var out []StateChange
	var ev LeaseEvent
	if !l.expired && !now.Before(s.leaseEndLocked()) {
		ev = s.leaseEventLocked(now, s.leaseEndLocked(), leaseExpired)
		l.expired = true
		l.cause = s.expiryCauseLocked(now)
		subs = s.takeSubsLocked()
		s.log.Warn("recipes: lease expired, holdings cancelled", "session", fmt.Sprintf("0x%x", l.sid), "err", l.cause)
	}
	if l.expired && !now.Before(s.leaseLostLocked()) {
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

// takeSubsLocked removes and returns every OnLeaseExpired registration.
func (s *Session) takeSubsLocked() []func(error) {
	subs := make([]func(error), 0, len(s.lease.subs))
	for k, f := range s.lease.subs {
		subs = append(subs, f)
		delete(s.lease.subs, k)
	}
	return subs
}

// stopLeaseLocked stops the timer; called by Close.
func (s *Session) stopLeaseLocked() {
	if s.lease.timer != nil {
		s.lease.timer.Stop()
	}
	s.lease.subs = nil
}
