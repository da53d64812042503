package recipes

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"
)

// sinkCall is one call the tap made to its lease sink.
type sinkCall struct {
	handshake bool
	sent      time.Time
	timeout   time.Duration
	sid       int64
}

type fakeSink struct {
	mu    sync.Mutex
	calls []sinkCall
	ping  time.Duration // what leasePing answers
	// what leaseStall answers
	stall, window time.Duration
	capped        bool
}

func (f *fakeSink) leasePing() time.Duration { return f.ping }

func (f *fakeSink) leaseStall() (time.Duration, time.Duration, bool) {
	return f.stall, f.window, f.capped
}

func (f *fakeSink) leaseHandshake(sent time.Time, timeout time.Duration, sid int64) {
	f.mu.Lock()
	f.calls = append(f.calls, sinkCall{true, sent, timeout, sid})
	f.mu.Unlock()
}

func (f *fakeSink) leaseRenew(sent time.Time) {
	f.mu.Lock()
	f.calls = append(f.calls, sinkCall{sent: sent})
	f.mu.Unlock()
}

func connectResponse(timeoutMs int32, sid int64) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0) // protocol version
	b = binary.BigEndian.AppendUint32(b, uint32(timeoutMs))
	b = binary.BigEndian.AppendUint64(b, uint64(sid))
	b = binary.BigEndian.AppendUint32(b, 16)
	return frame(append(b, make([]byte, 16)...))
}

func request(xid, op int32) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(xid))
	return frame(binary.BigEndian.AppendUint32(b, uint32(op)))
}

// TestTapLease: the tap reports the negotiated timeout of a connect
// response with the connect request's send time, and for each reply the
// send time of its request; watch events, expired sessions and system
// errors renew nothing; pings are answered in order.
func TestTapLease(t *testing.T) {
	type step struct {
		send []byte // written by the client, or
		recv []byte // read by the client
		want []sinkCall
		// wantSent[i]: the index of the write whose time the i-th call
		// must carry.
		wantSent []int
	}
	steps := []step{
		// Writes are numbered in order: 0 connect, 1-2 pings, 3-5 getData.
		{send: frame(make([]byte, 44))}, // connect request
		{recv: connectResponse(3000, 0x42), want: []sinkCall{{handshake: true, timeout: 3 * time.Second, sid: 0x42}}, wantSent: []int{0}},
		{send: request(-2, 11)},
		{send: request(-2, 11)},
		{send: request(5, 4)},
		{send: request(6, 4)},
		{send: request(7, 4)},
		{recv: reply(-1, 0, 0)}, // watch event: nothing
		{recv: reply(-2, 0, 0), want: []sinkCall{{}}, wantSent: []int{1}},
		{recv: reply(-2, 0, 0), want: []sinkCall{{}}, wantSent: []int{2}},
		{recv: reply(5, 9, -112)}, // session expired: nothing
		{recv: reply(6, 9, -4)},   // connection loss (system error): nothing
		{recv: reply(7, 9, -101), want: []sinkCall{{}}, wantSent: []int{5}}, // no node: renews
		{recv: reply(8, 9, 0)}, // unknown xid: nothing
	}
	sink := &fakeSink{}
	tap := newCreateTap()
	tap.lease = sink
	client, server := net.Pipe()
	defer server.Close()
	dial := tap.dialer(func(string, string, time.Duration) (net.Conn, error) { return client, nil })
	c, err := dial("tcp", "x", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	type span struct{ began, ended time.Time }
	var writes []span
	for i, st := range steps {
		before := len(sink.calls)
		if st.send != nil {
			go func() { _, _ = server.Read(make([]byte, len(st.send))) }()
			began := time.Now()
			if _, err := c.Write(st.send); err != nil {
				t.Fatal(err)
			}
			writes = append(writes, span{began, time.Now()})
			time.Sleep(time.Millisecond) // distinct send times; not a wait for a condition
			continue
		}
		go func() { _, _ = server.Write(st.recv) }()
		buf := make([]byte, len(st.recv))
		for n := 0; n < len(buf); {
			k, err := c.Read(buf[n:])
			if err != nil {
				t.Fatal(err)
			}
			n += k
		}
		got := sink.calls[before:]
		if len(got) != len(st.want) {
			t.Fatalf("step %d: %d calls %+v, want %d", i, len(got), got, len(st.want))
		}
		for j, w := range st.want {
			g := got[j]
			// The send time is taken as the request's write began.
			at := writes[st.wantSent[j]]
			if g.handshake != w.handshake || g.timeout != w.timeout || g.sid != w.sid ||
				g.sent.Before(at.began) || g.sent.After(at.ended) {
				t.Fatalf("step %d: call %+v, want %+v sent within %+v", i, g, w, at)
			}
		}
	}
}

func TestRenewsLease(t *testing.T) {
	for code, want := range map[int32]bool{
		0: true, -101: true, -102: true, -103: true, -108: true, -110: true, -111: true, -114: true, -121: true,
		-1: false, -4: false, -7: false, -112: false, -115: false, -118: false, -119: false, 5: false,
	} {
		if renewsLease(code) != want {
			t.Errorf("renewsLease(%d) = %v", code, !want)
		}
	}
}

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

// TestTapPings: after the handshake, with a lease ping interval, the tap
// writes a ping whenever the connection was idle for that long (and not
// while frames flow), each reply renews the lease with that ping's send
// time, and Close ends the pinger.
func TestTapPings(t *testing.T) {
	const every = 40 * time.Millisecond
	sink := &fakeSink{ping: every}
	tap := newCreateTap()
	tap.lease = sink
	client, server := net.Pipe()
	defer server.Close()
	dial := tap.dialer(func(string, string, time.Duration) (net.Conn, error) { return client, nil })
	c, err := dial("tcp", "x", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = server.Read(make([]byte, 64)) }()
	if _, err := c.Write(frame(make([]byte, 40))); err != nil { // the connect request
		t.Fatal(err)
	}
	go func() { _, _ = server.Write(connectResponse(3000, 7)) }()
	if _, err := c.Read(make([]byte, 64)); err != nil {
		t.Fatal(err)
	}
	// The server reads what the tap writes and answers pings; the client
	// side reads the answers as go-zookeeper would.
	got := make(chan []byte, 16)
	go func() {
		for {
			b := make([]byte, len(pingFrame))
			if _, err := io.ReadFull(server, b); err != nil {
				close(got)
				return
			}
			got <- b
		}
	}()
	go func() { _, _ = io.Copy(io.Discard, c) }()
	began := time.Now()
	for i := 0; i < 3; i++ {
		select {
		case b, ok := <-got:
			if !ok || string(b) != string(pingFrame) {
				t.Fatalf("server read %x, want a ping", b)
			}
			if _, err := server.Write(reply(-2, 0, 0)); err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no ping within 5s")
		}
	}
	if el := time.Since(began); el < 3*every {
		t.Fatalf("3 pings in %v, want at least %v apart", el, every)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		sink.mu.Lock()
		renewals := 0
		for _, call := range sink.calls {
			if !call.handshake && !call.sent.Before(began) {
				renewals++
			}
		}
		sink.mu.Unlock()
		if renewals >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d renewals from ping replies, want 3", renewals)
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.Close()
	select {
	case _, ok := <-got:
		for ok {
			_, ok = <-got
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the tap went on after Close")
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

// TestRenewalPoint: a reply renews from its request's send time, or, when
// capped, from no later than the cap after the oldest request then
// unanswered (a stall, remembered for the window after its reply
// arrived); a request sent with nothing waiting is its own oldest, and is
// capped by a stall seen within the window before it was sent.
func TestRenewalPoint(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	none := stallMemo{}
	for _, c := range []struct {
		name     string
		s        sentAt
		m        stallMemo
		now      time.Time
		stall    time.Duration
		capped   bool
		want     time.Time
		wantMemo stallMemo
	}{
		{"uncapped: the send time", sentAt{at: ms(5000), oldest: ms(0)}, none, ms(5010), time.Second, false, ms(5000), none},
		{"nothing waiting", sentAt{at: ms(5000), oldest: ms(5000)}, none, ms(5010), time.Second, true, ms(5000), none},
		{"waited less than the cap", sentAt{at: ms(900), oldest: ms(0)}, none, ms(910), time.Second, true, ms(900), none},
		{"waited exactly the cap", sentAt{at: ms(1000), oldest: ms(0)}, none, ms(1010), time.Second, true, ms(1000), none},
		{"queued behind a stall: remembered", sentAt{at: ms(1800), oldest: ms(0)}, none, ms(1900), time.Second, true, ms(1000),
			stallMemo{cap: ms(1000), until: ms(2900)}},
		{"sent after the stall, within the window", sentAt{at: ms(1950), oldest: ms(1950)}, stallMemo{cap: ms(1000), until: ms(2900)}, ms(1960), time.Second, true, ms(1000),
			stallMemo{cap: ms(1000), until: ms(2900)}},
		{"sent after the window", sentAt{at: ms(2900), oldest: ms(2900)}, stallMemo{cap: ms(1000), until: ms(2900)}, ms(2910), time.Second, true, ms(2900),
			stallMemo{cap: ms(1000), until: ms(2900)}},
		{"sent before the stall's cap", sentAt{at: ms(500), oldest: ms(500)}, stallMemo{cap: ms(1000), until: ms(2900)}, ms(2000), time.Second, true, ms(500),
			stallMemo{cap: ms(1000), until: ms(2900)}},
		{"a later stall replaces the memo", sentAt{at: ms(9000), oldest: ms(7000)}, stallMemo{cap: ms(1000), until: ms(2900)}, ms(9100), time.Second, true, ms(8000),
			stallMemo{cap: ms(8000), until: ms(10100)}},
		{"uncapped ignores a memo", sentAt{at: ms(1950), oldest: ms(1950)}, stallMemo{cap: ms(1000), until: ms(2900)}, ms(1960), time.Second, false, ms(1950),
			stallMemo{cap: ms(1000), until: ms(2900)}},
		{"zero cap", sentAt{at: ms(10), oldest: ms(0)}, none, ms(20), 0, true, ms(0), stallMemo{cap: ms(0), until: ms(1020)}},
		{"negative cap (P > S + R)", sentAt{at: ms(5000), oldest: ms(5000)}, none, ms(5010), -3 * time.Second, true, ms(2000),
			stallMemo{cap: ms(2000), until: ms(6010)}},
	} {
		got, memo := renewalPoint(c.s, c.m, c.now, c.stall, time.Second, c.capped)
		if !got.Equal(c.want) || memo != c.wantMemo {
			t.Errorf("%s: renewalPoint(%v, %v) = %v, %v; want %v, %v", c.name, c.s, c.m, got.Sub(t0), memo, c.want.Sub(t0), c.wantMemo)
		}
	}
}

// TestTapCapsRenewalBehindStall: with a cap of 0, a reply to a request
// written while an earlier one was unanswered renews only from the
// earlier one's send time (no renewal beyond it: one call); without a cap
// it renews from its own send time (two calls).
func TestTapCapsRenewalBehindStall(t *testing.T) {
	for _, capped := range []bool{true, false} {
		sink := &fakeSink{capped: capped}
		tap := newCreateTap()
		tap.lease = sink
		client, server := net.Pipe()
		dial := tap.dialer(func(string, string, time.Duration) (net.Conn, error) { return client, nil })
		c, err := dial("tcp", "x", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		write := func(b []byte) {
			go func() { _, _ = server.Read(make([]byte, len(b))) }()
			if _, err := c.Write(b); err != nil {
				t.Fatal(err)
			}
		}
		read := func(b []byte) {
			go func() { _, _ = server.Write(b) }()
			buf := make([]byte, len(b))
			for n := 0; n < len(buf); {
				k, err := c.Read(buf[n:])
				if err != nil {
					t.Fatal(err)
				}
				n += k
			}
		}
		write(frame(make([]byte, 44)))
		read(connectResponse(3000, 0x42))
		write(request(1, 4))
		time.Sleep(time.Millisecond) // distinct send times; not a wait for a condition
		write(request(2, 4))
		read(reply(1, 9, 0))
		read(reply(2, 9, 0))
		_ = c.Close()
		_ = server.Close()
		renewals := sink.calls[1:] // after the handshake
		want := 2
		if capped {
			want = 1
		}
		if len(renewals) != want {
			t.Fatalf("capped %v: %d renewals %+v, want %d", capped, len(renewals), renewals, want)
		}
		if !capped && !renewals[1].sent.After(renewals[0].sent) {
			t.Fatalf("uncapped: renewals %+v do not move forward", renewals)
		}
	}
}

// FuzzRenewalPoint: the renewal point is never after the send time, is
// never after the cap past the oldest when capped, and never after a
// remembered stall's cap for a request sent within its window.
func FuzzRenewalPoint(f *testing.F) {
	f.Add(int64(5000), int64(0), int64(1000), int64(0), int64(0), true)
	f.Add(int64(900), int64(0), int64(1000), int64(100), int64(2000), true)
	f.Add(int64(10), int64(10), int64(-3000), int64(5), int64(100), true)
	f.Add(int64(10), int64(0), int64(0), int64(0), int64(0), false)
	f.Fuzz(func(t *testing.T, at, waited, stall, memoCap, memoUntil int64, capped bool) {
		t0 := time.Unix(1000, 0)
		if waited < 0 {
			waited = -waited
		}
		s := sentAt{at: t0.Add(time.Duration(at)), oldest: t0.Add(time.Duration(at) - time.Duration(waited))}
		m := stallMemo{cap: t0.Add(time.Duration(memoCap)), until: t0.Add(time.Duration(memoUntil))}
		now := s.at.Add(time.Millisecond)
		got, memo := renewalPoint(s, m, now, time.Duration(stall), time.Second, capped)
		if got.After(s.at) {
			t.Fatalf("renewalPoint(%v, %v) = %v: after the send time", s, m, got)
		}
		if !capped {
			if !got.Equal(s.at) || memo != m {
				t.Fatalf("uncapped renewalPoint(%v, %v) = %v, %v: want the send time, the memo unchanged", s, m, got, memo)
			}
			return
		}
		if got.After(s.oldest.Add(time.Duration(stall))) {
			t.Fatalf("renewalPoint(%v, %v) = %v: past the cap", s, stall, got)
		}
		if s.at.Before(m.until) && got.After(m.cap) && memo == m {
			t.Fatalf("renewalPoint(%v, %v) = %v: past the remembered stall's cap", s, m, got)
		}
		if got.Before(s.at) && memo != m && (!memo.cap.Equal(got) || !memo.until.Equal(now.Add(time.Second))) {
			t.Fatalf("renewalPoint(%v, %v) = %v, %v: a stall not remembered as its cap and window", s, m, got, memo)
		}
	})
}
