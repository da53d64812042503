// The lease's budget: the terms of the bound (LeaseBudget, derived in
// docs/design.md), checked once against the negotiated timeout, and the
// default margin.

package recipes

import (
	"errors"
	"fmt"
	"time"
)

// ErrLeaseTooShort is returned (wrapped with ErrBadArgument) by every
// attempt to acquire a holding on a Session whose negotiated timeout
// leaves no lease (see LeaseBudget): a holding could never be kept, so
// none is attempted and nothing is sent.
var ErrLeaseTooShort = errors.New("recipes: session timeout too short for a lease")

// minLeasePing is the shortest ping interval the lease will ask for; a
// budget that needs more frequent pings is refused.
const minLeasePing = 50 * time.Millisecond

// LeaseBudget is how the lease divides a negotiated session timeout
// (see Session.LeaseDeadline). Every duration is on the client's clock.
type LeaseBudget struct {
	Timeout time.Duration // T: the negotiated session timeout
	Margin  time.Duration // m: ends holdings this long before the earliest expiry
	// Lag (Λ) is how much older than the send time of our newest answered
	// request the leader's last touch of the session can be: S + Q + R +
	// Ping on an ensemble, 0 on a standalone server.
	Lag time.Duration
	// Ping (P) is the interval of the Session's own pings, 0 when
	// go-zookeeper's (every T/3) are used alone.
	Ping time.Duration
	// Hold is how long a holding lasts after the send time of the newest
	// answered request: T - Λ - m.
	Hold time.Duration
	// Stall caps what a reply proves when the server kept our requests
	// waiting: a reply renews the lease from its request's send time, but
	// from no later than Stall after the send time of the oldest request of
	// the connection then unanswered. S + R - P on an ensemble (a server
	// frozen with our requests queued answers them at its thaw with what
	// it believed before; docs/design.md, "Server freezes"); 0, no cap, on
	// a standalone server. While the server answers promptly it changes
	// nothing. Negative when P > S + R: then every renewal counts from
	// that much before its send time.
	Stall time.Duration
}

// NewLeaseBudget returns the budget for a negotiated timeout, a margin,
// the ensemble's tickTime and syncLimit (0: standalone) and the leader's
// retransmission allowance R (see WithQuorumRetransmit; ignored on a
// standalone server). On an ensemble the slack T - S - Q - R - m is split
// into five: one part is P, the rest is Hold, so a reply may come up to 3P
// late before holdings end. It fails with an error wrapping ErrBadArgument
// and ErrLeaseTooShort when no holding could be kept: Hold is not longer
// than the interval between renewals, or P would be below 50ms; and with
// ErrBadArgument alone when retransmit is negative. Pure.
func NewLeaseBudget(timeout, margin, tickTime time.Duration, syncLimit int, retransmit time.Duration) (LeaseBudget, error) {
	b := LeaseBudget{Timeout: timeout, Margin: margin}
	if retransmit < 0 {
		return b, fmt.Errorf("%w: quorum retransmission allowance %v", ErrBadArgument, retransmit)
	}
	renewEvery := timeout / 3 // go-zookeeper's ping interval
	if syncLimit > 0 {
		s := tickTime * time.Duration(syncLimit)
		q := tickTime / 2
		slack := timeout - s - q - retransmit - margin
		b.Ping = slack / 5
		b.Lag = s + q + retransmit + b.Ping
		b.Stall = s + retransmit - b.Ping
		renewEvery = b.Ping
		if b.Ping < minLeasePing {
			return b, fmt.Errorf("%w: %w: timeout %v, margin %v, ensemble tickTime %v x syncLimit %d, retransmission %v: "+
				"a server cut off from its leader may answer for %v, and the timeout must exceed that plus tickTime/2, the retransmission allowance and the margin",
				ErrBadArgument, ErrLeaseTooShort, timeout, margin, tickTime, syncLimit, retransmit, s)
		}
	}
	b.Hold = timeout - b.Lag - margin
	if b.Hold <= renewEvery {
		return b, fmt.Errorf("%w: %w: timeout %v, margin %v: a holding would last %v after each renewal, renewed every %v",
			ErrBadArgument, ErrLeaseTooShort, timeout, margin, b.Hold, renewEvery)
	}
	return b, nil
}

// minLeaseMargin is the floor of DefaultLeaseMargin.
const minLeaseMargin = 100 * time.Millisecond

// DefaultLeaseMargin returns the lease margin used for a negotiated session
// timeout when WithLeaseMargin is not given: a tenth of the timeout, at
// least 100ms, at most half the timeout (2s for the default 20s timeout,
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
// The margin costs nothing while replies flow: pings renew the lease
// often (see LeaseBudget), so holdings end early only when no reply came
// for most of the lease.
func DefaultLeaseMargin(timeout time.Duration) time.Duration {
	return min(max(timeout/10, minLeaseMargin), timeout/2)
}
