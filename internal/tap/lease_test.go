package tap

import (
	"encoding/binary"
	"io"
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

// sinks are f's methods as the tap's lease sinks.
func (f *fakeSink) sinks() Sinks {
	return Sinks{Handshake: f.leaseHandshake, Renew: f.leaseRenew, PingEvery: f.leasePing, Stall: f.leaseStall}
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
	tap := New(sink.sinks())
	client, server := net.Pipe()
	defer server.Close()
	dial := tap.Dialer(func(string, string, time.Duration) (net.Conn, error) { return client, nil })
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

// TestTapPings: after the handshake, with a lease ping interval, the tap
// writes a ping whenever the connection was idle for that long (and not
// while frames flow), each reply renews the lease with that ping's send
// time, and Close ends the pinger.
func TestTapPings(t *testing.T) {
	const every = 40 * time.Millisecond
	sink := &fakeSink{ping: every}
	tap := New(sink.sinks())
	client, server := net.Pipe()
	defer server.Close()
	dial := tap.Dialer(func(string, string, time.Duration) (net.Conn, error) { return client, nil })
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
		// The full tier at 90eac1d: a follower frozen 4.5 s (stall 40 ms)
		// answered, at its thaw, the pings queued since 1.26 s (a stall:
		// cap 40 ms) and then a read sent at 4.52 s, just after the thaw,
		// behind only the read sent at 4.45 s, late in the freeze. Its own
		// cap, 4.49 s, renewed the lease past the leader's expiry of the
		// session; the first stall's cap binds it.
		{"a stall within an earlier stall's window keeps its cap", sentAt{at: ms(4520), oldest: ms(4451)}, stallMemo{cap: ms(40), until: ms(5516)}, ms(4530),
			40 * time.Millisecond, true, ms(40), stallMemo{cap: ms(40), until: ms(5516)}},
		{"a stall within the window, its own cap earlier", sentAt{at: ms(1500), oldest: ms(0)}, stallMemo{cap: ms(1000), until: ms(2900)}, ms(1600),
			500 * time.Millisecond, true, ms(500), stallMemo{cap: ms(1000), until: ms(2900)}},
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

// pipeTap dials through a tap with sink's sinks to one end of a pipe and
// returns the tap's connection, a write that sends b through it (the far
// end reads it) and a read that has the far end send b and reads it all;
// both end the test on an error. The pipe closes at cleanup.
func pipeTap(t *testing.T, sink *fakeSink) (c net.Conn, write, read func(b []byte)) {
	t.Helper()
	tp := New(sink.sinks())
	client, server := net.Pipe()
	dial := tp.Dialer(func(string, string, time.Duration) (net.Conn, error) { return client, nil })
	c, err := dial("tcp", "x", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(); _ = server.Close() })
	write = func(b []byte) {
		go func() { _, _ = server.Read(make([]byte, len(b))) }()
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	read = func(b []byte) {
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
	return c, write, read
}

// TestTapCapsRenewalBehindStall: with a cap of 0, a reply to a request
// written while an earlier one was unanswered renews only from the
// earlier one's send time (no renewal beyond it: one call); without a cap
// it renews from its own send time (two calls).
func TestTapCapsRenewalBehindStall(t *testing.T) {
	for _, capped := range []bool{true, false} {
		sink := &fakeSink{capped: capped}
		c, write, read := pipeTap(t, sink)
		write(frame(make([]byte, 44)))
		read(connectResponse(3000, 0x42))
		write(request(1, 4))
		time.Sleep(time.Millisecond) // distinct send times; not a wait for a condition
		write(request(2, 4))
		read(reply(1, 9, 0))
		read(reply(2, 9, 0))
		_ = c.Close()
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

// TestTapStallMemoBindsLaterStall replays, through a tap with a cap of 0
// and a window of a minute, what a follower frozen long did at its thaw
// in the full tier at 90eac1d: requests 1 (sent at t1) and 2 (t2, late in
// the freeze) wait; 1 is answered (it waited behind nothing: renews from
// t1); 3 is sent, behind 2 alone; 2 is answered (a stall: capped at t1);
// 3 is answered, a stall behind 2 whose own cap would be t2. The first
// stall's cap binds it: the lease is renewed once, from t1, and never
// from t2 (on the code before, it was, and the lease outlived the
// leader's expiry of the session).
func TestTapStallMemoBindsLaterStall(t *testing.T) {
	sink := &fakeSink{capped: true, window: time.Minute}
	_, send, read := pipeTap(t, sink)
	write := func(b []byte) {
		send(b)
		time.Sleep(time.Millisecond) // distinct send times; not a wait for a condition
	}
	write(frame(make([]byte, 44)))
	read(connectResponse(3000, 0x42))
	write(request(1, 4))
	write(request(2, 4))
	read(reply(1, 9, 0))
	write(request(3, 4))
	read(reply(2, 9, 0))
	read(reply(3, 9, 0))
	sink.mu.Lock()
	renewals := append([]sinkCall(nil), sink.calls[1:]...) // after the handshake
	sink.mu.Unlock()
	if len(renewals) != 1 {
		t.Fatalf("%d renewals %+v, want 1 (from request 1's send time)", len(renewals), renewals)
	}
}

// FuzzRenewalPoint: the renewal point is never after the send time, is
// never after the cap past the oldest when capped, and never after a
// remembered stall's cap for a request sent within its window, where the
// memo stays as it is; a stall outside any window is remembered.
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
		if s.at.Before(m.until) && (got.After(m.cap) || memo != m) {
			t.Fatalf("renewalPoint(%v, %v) = %v, %v: past the remembered stall's cap, or the memo moved within its window", s, m, got, memo)
		}
		if !s.at.Before(m.until) && got.Before(s.at) && (!memo.cap.Equal(got) || !memo.until.Equal(now.Add(time.Second))) {
			t.Fatalf("renewalPoint(%v, %v) = %v, %v: a stall not remembered as its cap and window", s, m, got, memo)
		}
	})
}
