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
}

func (f *fakeSink) leasePing() time.Duration { return f.ping }

// sinks are f's methods as the tap's lease sinks.
func (f *fakeSink) sinks() Sinks {
	return Sinks{Handshake: f.leaseHandshake, Renew: f.leaseRenew, PingEvery: f.leasePing}
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
