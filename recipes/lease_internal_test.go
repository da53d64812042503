package recipes

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"
)

func TestDefaultLeaseMargin(t *testing.T) {
	for timeout, want := range map[time.Duration]time.Duration{
		10 * time.Second:       time.Second,
		3 * time.Second:        300 * time.Millisecond,
		time.Second:            100 * time.Millisecond,
		400 * time.Millisecond: 100 * time.Millisecond,
		100 * time.Millisecond: 50 * time.Millisecond,
		0:                      0,
	} {
		if got := DefaultLeaseMargin(timeout); got != want {
			t.Errorf("DefaultLeaseMargin(%v) = %v, want %v", timeout, got, want)
		}
	}
}

// leaseSession is a Session without a connection, for the lease's state
// machine: connected under session id 7.
func leaseSession(margin time.Duration) *Session {
	s := &Session{
		opts:    defaultOptions(),
		log:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		changed: make(chan struct{}),
		subs:    make(map[*Subscription]struct{}),
		hooks:   make(map[uint64]func(StateChange)),
		state:   StateConnected,
		id:      7,
		lastID:  7,
	}
	s.opts.leaseMargin, s.opts.leaseMarginSet = margin, true
	s.opts.syncLimit = 0 // a standalone server: no lag (TestLeaseLag has one)
	return s
}

func stopLease(s *Session) {
	s.mu.Lock()
	s.closing = true
	s.stopLeaseLocked()
	s.mu.Unlock()
}

// TestLeaseStates: without renewal, lease subscribers are called at
// renewed + timeout - margin (never earlier), then the session is reported
// suspended and lost at renewed + timeout; a renewal while go-zookeeper
// kept the connection reports it reconnected; renewals keep it alive; a
// subscriber registered after expiry is called at once.
func TestLeaseStates(t *testing.T) {
	const timeout, margin = 400 * time.Millisecond, 100 * time.Millisecond
	s := leaseSession(margin)
	defer stopLease(s)
	if !s.LeaseDeadline().IsZero() || s.NegotiatedTimeout() != 0 {
		t.Fatal("lease known before a handshake")
	}
	sub := s.Subscribe()
	defer sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	next := func(want State) StateChange {
		t.Helper()
		c, err := sub.Next(ctx)
		if err != nil || c.State != want || c.SessionID != 7 {
			t.Fatalf("next = %+v, %v; want %v of session 7", c, err, want)
		}
		return c
	}
	next(StateConnected)

	renewed := time.Now()
	s.leaseHandshake(renewed, timeout, 7)
	if s.NegotiatedTimeout() != timeout || !s.LeaseDeadline().Equal(renewed.Add(timeout-margin)) {
		t.Fatalf("deadline %v after renewal, timeout %v", s.LeaseDeadline().Sub(renewed), s.NegotiatedTimeout())
	}
	type call struct {
		at    time.Time
		cause error
	}
	calls := make(chan call, 2)
	hctx, hcancel := context.WithCancelCause(context.Background())
	defer hcancel(nil)
	stop := s.OnLeaseExpired(func(cause error) { calls <- call{time.Now(), cause} })
	defer stop()
	context.AfterFunc(hctx, s.OnLeaseExpired(hcancel))

	c := <-calls
	if c.at.Before(renewed.Add(timeout-margin)) || c.at.After(renewed.Add(timeout-margin+time.Second)) {
		t.Fatalf("lease expired %v after renewal, want %v", c.at.Sub(renewed), timeout-margin)
	}
	if !errors.Is(c.cause, ErrLeaseExpired) || !errors.Is(c.cause, ErrSuspended) {
		t.Fatalf("cause %v", c.cause)
	}
	<-hctx.Done()
	if !errors.Is(context.Cause(hctx), ErrLeaseExpired) {
		t.Fatalf("holding-like context: %v", context.Cause(hctx))
	}
	next(StateSuspended)
	if l := next(StateLost); l.At.Before(renewed.Add(timeout)) {
		t.Fatalf("lost %v after renewal, want %v", l.At.Sub(renewed), timeout)
	}
	if s.ID() != 7 {
		t.Fatalf("ID after the lease's Lost = 0x%x, want 7 (the server may still have it)", s.ID())
	}
	// Registered after expiry: called at once.
	late := make(chan error, 1)
	s.OnLeaseExpired(func(cause error) { late <- cause })
	select {
	case err := <-late:
		if !errors.Is(err, ErrLeaseExpired) {
			t.Fatalf("late cause %v", err)
		}
	default:
		t.Fatal("a subscriber registered after expiry was not called")
	}

	// go-zookeeper never dropped the connection: a reply to something
	// sent just now brings the session back.
	s.leaseRenew(time.Now())
	next(StateReconnected)
	if s.State() != StateReconnected {
		t.Fatalf("state %v", s.State())
	}

	// Renewals every 50ms keep the lease for well past a timeout.
	kept := make(chan error, 1)
	stop2 := s.OnLeaseExpired(func(cause error) { kept <- cause })
	defer stop2()
	for end := time.Now().Add(3 * timeout); time.Now().Before(end); {
		s.leaseRenew(time.Now())
		time.Sleep(50 * time.Millisecond) // the renewal cadence under test
	}
	select {
	case err := <-kept:
		t.Fatalf("lease expired while renewed: %v", err)
	default:
	}
	// Once expired, a reply to a request sent more than timeout - margin
	// ago does not bring the lease back.
	c2 := <-kept
	if !errors.Is(c2, ErrLeaseExpired) {
		t.Fatal(c2)
	}
	s.leaseRenew(time.Now().Add(-(timeout - margin) - 10*time.Millisecond))
	if d := s.LeaseDeadline(); d.After(time.Now()) {
		t.Fatalf("stale renewal moved the deadline %v ahead", time.Until(d))
	}
	after := make(chan error, 1)
	s.OnLeaseExpired(func(cause error) { after <- cause })
	select {
	case <-after:
	default:
		t.Fatal("stale renewal revived the lease")
	}
}

// TestNewLeaseBudget: the budget's terms, and the settings that leave no
// lease.
func TestNewLeaseBudget(t *testing.T) {
	ms := time.Millisecond
	const r = DefaultQuorumRetransmit
	for _, c := range []struct {
		name                  string
		timeout, margin, tick time.Duration
		syncLimit             int
		retransmit            time.Duration
		want                  LeaseBudget
		short                 bool // ErrLeaseTooShort
		bad                   bool // ErrBadArgument alone
	}{
		{name: "standalone", timeout: 3000 * ms, margin: 300 * ms, tick: 200 * ms, retransmit: r,
			want: LeaseBudget{Timeout: 3000 * ms, Margin: 300 * ms, Hold: 2700 * ms}},
		{name: "testenv", timeout: 3000 * ms, margin: 300 * ms, tick: 200 * ms, syncLimit: 5, retransmit: r,
			// S 1000, Q 100, R 300, slack 1300, P 260, Stall S + R - P
			want: LeaseBudget{Timeout: 3000 * ms, Margin: 300 * ms, Lag: 1660 * ms, Ping: 260 * ms, Hold: 1040 * ms, Stall: 1040 * ms}},
		{name: "testenv, no retransmission allowance", timeout: 3000 * ms, margin: 300 * ms, tick: 200 * ms, syncLimit: 5,
			// S 1000, Q 100, slack 1600, P 320
			want: LeaseBudget{Timeout: 3000 * ms, Margin: 300 * ms, Lag: 1420 * ms, Ping: 320 * ms, Hold: 1280 * ms, Stall: 680 * ms}},
		{name: "testenv, one second's retransmission", timeout: 3000 * ms, margin: 300 * ms, tick: 200 * ms, syncLimit: 5, retransmit: time.Second,
			// S 1000, Q 100, R 1000, slack 600, P 120
			want: LeaseBudget{Timeout: 3000 * ms, Margin: 300 * ms, Lag: 2220 * ms, Ping: 120 * ms, Hold: 480 * ms, Stall: 1880 * ms}},
		{name: "zookeeper defaults", timeout: DefaultSessionTimeout, margin: DefaultLeaseMargin(DefaultSessionTimeout),
			tick: DefaultTickTime, syncLimit: DefaultSyncLimit, retransmit: r,
			// S 10 s, Q 1 s, R 300 ms, m 2 s, slack 6.7 s, P 1.34 s
			want: LeaseBudget{Timeout: 20 * time.Second, Margin: 2 * time.Second, Lag: 12640 * ms, Ping: 1340 * ms, Hold: 5360 * ms, Stall: 8960 * ms}},
		{name: "zookeeper defaults, 120 s timeout", timeout: 120 * time.Second, margin: 12 * time.Second,
			tick: DefaultTickTime, syncLimit: DefaultSyncLimit, retransmit: r,
			// S 10 s, Q 1 s, R 300 ms, m 12 s, slack 96.7 s, P 19.34 s > S + R: Stall negative
			want: LeaseBudget{Timeout: 120 * time.Second, Margin: 12 * time.Second, Lag: 30640 * ms, Ping: 19340 * ms, Hold: 77360 * ms, Stall: -9040 * ms}},
		{name: "zookeeper defaults, 10 s timeout", timeout: 10 * time.Second, margin: time.Second, tick: 2 * time.Second, syncLimit: 5, retransmit: r, short: true},
		{name: "S plus margin below T is not enough", timeout: 2400 * ms, margin: 240 * ms, tick: 200 * ms, syncLimit: 10, retransmit: r, short: true},
		{name: "ping below the floor", timeout: 1000 * ms, margin: 100 * ms, tick: 100 * ms, syncLimit: 8, retransmit: r, short: true},
		{name: "R pushes the ping below the floor", timeout: 1500 * ms, margin: 10 * ms, tick: 200 * ms, syncLimit: 5, retransmit: r, short: true},
		{name: "margin of an hour", timeout: 3000 * ms, margin: time.Hour, tick: 200 * ms, retransmit: r, short: true},
		{name: "margin past two thirds, standalone", timeout: 3000 * ms, margin: 2000 * ms, tick: 200 * ms, retransmit: r, short: true},
		{name: "negative retransmission allowance", timeout: 3000 * ms, margin: 300 * ms, tick: 200 * ms, syncLimit: 5, retransmit: -ms, bad: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := NewLeaseBudget(c.timeout, c.margin, c.tick, c.syncLimit, c.retransmit)
			if c.short || c.bad {
				if c.short != errors.Is(err, ErrLeaseTooShort) || !errors.Is(err, ErrBadArgument) {
					t.Fatalf("NewLeaseBudget = %+v, %v; want ErrBadArgument, ErrLeaseTooShort %v", b, err, c.short)
				}
				return
			}
			if err != nil || b != c.want {
				t.Fatalf("NewLeaseBudget = %+v, %v; want %+v", b, err, c.want)
			}
			if b.Hold+b.Lag+b.Margin != b.Timeout {
				t.Fatalf("Hold + Lag + Margin = %v, want the timeout %v", b.Hold+b.Lag+b.Margin, b.Timeout)
			}
		})
	}
}

// FuzzNewLeaseBudget: a budget it grants always divides the timeout into
// Hold + Lag + Margin, with Hold longer than the renewal interval, and Lag
// at least syncLimit x tickTime + tickTime/2 + R + Ping on an ensemble.
func FuzzNewLeaseBudget(f *testing.F) {
	f.Add(int64(3000), int64(300), int64(200), 5, int64(300))
	f.Add(int64(20000), int64(2000), int64(2000), 5, int64(300))
	f.Add(int64(10000), int64(1000), int64(2000), 0, int64(300))
	f.Add(int64(3000), int64(300), int64(200), 5, int64(0))
	f.Fuzz(func(t *testing.T, timeoutMs, marginMs, tickMs int64, syncLimit int, retransmitMs int64) {
		if timeoutMs <= 0 || timeoutMs > 1e7 || marginMs < 0 || marginMs > 1e7 || tickMs <= 0 || tickMs > 1e6 ||
			syncLimit < 0 || syncLimit > 1000 || retransmitMs < 0 || retransmitMs > 1e6 {
			t.Skip()
		}
		ms := time.Millisecond
		timeout, margin, tick, retransmit := time.Duration(timeoutMs)*ms, time.Duration(marginMs)*ms, time.Duration(tickMs)*ms, time.Duration(retransmitMs)*ms
		b, err := NewLeaseBudget(timeout, margin, tick, syncLimit, retransmit)
		if err != nil {
			if !errors.Is(err, ErrLeaseTooShort) {
				t.Fatalf("error %v does not wrap ErrLeaseTooShort", err)
			}
			return
		}
		if b.Hold+b.Lag+b.Margin != timeout {
			t.Fatalf("%+v does not add up to the timeout", b)
		}
		renew := timeout / 3
		if syncLimit > 0 {
			renew = b.Ping
			if b.Lag < tick*time.Duration(syncLimit)+tick/2+retransmit+b.Ping || b.Ping < minLeasePing {
				t.Fatalf("%+v: lag short of S + Q + R + P, or ping below the floor", b)
			}
		} else if b.Lag != 0 || b.Ping != 0 {
			t.Fatalf("%+v: a standalone server has no lag", b)
		}
		if b.Hold <= renew {
			t.Fatalf("%+v: a holding would end between renewals every %v", b, renew)
		}
	})
}

// TestLeaseLag: on an ensemble the deadline allows for the lag, the
// session is reported lost at renewed + T - lag, and the Session asks the
// tap to ping at the budget's interval.
func TestLeaseLag(t *testing.T) {
	const timeout, margin = 3000 * time.Millisecond, 300 * time.Millisecond
	s := leaseSession(margin)
	defer stopLease(s)
	s.opts.tick, s.opts.syncLimit = 200*time.Millisecond, 5
	sub := s.Subscribe()
	defer sub.Close()
	renewed := time.Now()
	s.leaseHandshake(renewed, timeout, 7)
	b, err := s.LeaseBudget()
	if err != nil || b.Lag != 1660*time.Millisecond || s.leasePing() != 260*time.Millisecond {
		t.Fatalf("budget %+v, %v; ping %v", b, err, s.leasePing())
	}
	if got := s.LeaseDeadline().Sub(renewed); got != timeout-b.Lag-margin {
		t.Fatalf("deadline %v after renewal, want %v", got, timeout-b.Lag-margin)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		c, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.State != StateLost {
			continue
		}
		if at := c.At.Sub(renewed); at < timeout-b.Lag || at > timeout {
			t.Fatalf("lost %v after renewal, want %v (T - lag) and before T", at, timeout-b.Lag)
		}
		return
	}
}

// TestLeaseTooShort: a handshake whose timeout leaves no lease ends the
// holdings at once and makes acquisitions fail, without reporting the
// session lost (go-zookeeper alone reports its state then).
func TestLeaseTooShort(t *testing.T) {
	s := leaseSession(240 * time.Millisecond)
	defer stopLease(s)
	s.opts.tick, s.opts.syncLimit = 200*time.Millisecond, 10
	renewed := time.Now()
	s.leaseHandshake(renewed, 2400*time.Millisecond, 7) // S + margin < T, but no room for Q and pings
	ended := make(chan error, 1)
	s.OnLeaseExpired(func(cause error) { ended <- cause })
	if err := <-ended; !errors.Is(err, ErrLeaseExpired) || !errors.Is(err, ErrLeaseTooShort) {
		t.Fatalf("holding ended with %v", err)
	}
	if err := s.checkLease(); !errors.Is(err, ErrLeaseTooShort) {
		t.Fatalf("checkLease = %v", err)
	}
	if s.leasePing() != 0 {
		t.Fatal("a session with no lease pings")
	}
	s.mu.Lock()
	armed := !s.lease.armedAt.IsZero()
	s.mu.Unlock()
	if armed {
		t.Fatal("lease timer armed on a session with no lease")
	}
}

// TestWithEnsembleTiming: the option sets the timing the lease uses, and a
// tickTime of 0 or less or a negative syncLimit is refused with
// ErrBadArgument (Connect then fails before dialing).
func TestWithEnsembleTiming(t *testing.T) {
	o, err := buildOptions(nil)
	if err != nil || o.tick != DefaultTickTime || o.syncLimit != DefaultSyncLimit {
		t.Fatalf("defaults: tick %v, syncLimit %d, %v", o.tick, o.syncLimit, err)
	}
	if o, err = buildOptions([]Option{WithEnsembleTiming(200*time.Millisecond, 0)}); err != nil || o.tick != 200*time.Millisecond || o.syncLimit != 0 {
		t.Fatalf("standalone: tick %v, syncLimit %d, %v", o.tick, o.syncLimit, err)
	}
	for _, bad := range []Option{WithEnsembleTiming(0, 5), WithEnsembleTiming(-time.Second, 5), WithEnsembleTiming(time.Second, -1)} {
		if _, err := buildOptions([]Option{bad}); !errors.Is(err, ErrBadArgument) {
			t.Errorf("bad timing: %v, want ErrBadArgument", err)
		}
	}
}

// TestWithQuorumRetransmit: the option sets the retransmission allowance
// the lease uses (DefaultQuorumRetransmit by default, 0 allowed), and a
// negative one is refused with ErrBadArgument.
func TestWithQuorumRetransmit(t *testing.T) {
	o, err := buildOptions(nil)
	if err != nil || o.retransmit != DefaultQuorumRetransmit {
		t.Fatalf("default: %v, %v", o.retransmit, err)
	}
	for _, d := range []time.Duration{0, time.Second} {
		if o, err = buildOptions([]Option{WithQuorumRetransmit(d)}); err != nil || o.retransmit != d {
			t.Fatalf("WithQuorumRetransmit(%v): %v, %v", d, o.retransmit, err)
		}
	}
	if _, err := buildOptions([]Option{WithQuorumRetransmit(-time.Millisecond)}); !errors.Is(err, ErrBadArgument) {
		t.Errorf("negative: %v, want ErrBadArgument", err)
	}
}
