package recipes

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// scriptConn is a net.Conn whose reads return the chunks of in, in turn,
// then io.EOF (or, with loop, in's first chunk forever); writes are
// discarded.
type scriptConn struct {
	net.Conn
	in   [][]byte
	loop bool
}

func (c *scriptConn) Write(b []byte) (int, error) { return len(b), nil }
func (c *scriptConn) Close() error                { return nil }

func (c *scriptConn) Read(b []byte) (int, error) {
	if len(c.in) == 0 {
		return 0, io.EOF
	}
	n := copy(b, c.in[0])
	if !c.loop {
		c.in = c.in[1:]
	}
	return n, nil
}

// recorder is an Observer keeping what it sees.
type recorder struct {
	BaseObserver
	mu    sync.Mutex
	calls []CallEvent
}

func (r *recorder) ObserveCall(c CallEvent) {
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
}

func pathRequest(xid, op int32, path string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(xid))
	b = binary.BigEndian.AppendUint32(b, uint32(op))
	if path != "" {
		b = binary.BigEndian.AppendUint32(b, uint32(len(path)))
		b = append(b, path...)
	}
	return frame(append(b, 0))
}

func connectReply(timeoutMs int32, sid int64) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(timeoutMs))
	b = binary.BigEndian.AppendUint64(b, uint64(sid))
	return frame(append(b, make([]byte, 20)...))
}

// tapped returns a connection through a tap with observer o (nil: none)
// over sc.
func tapped(t testing.TB, o Observer, sc *scriptConn) net.Conn {
	tap := newCreateTap()
	tap.obs = o
	c, err := tap.dialer(func(string, string, time.Duration) (net.Conn, error) { return sc, nil })("tcp", "x", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTapCalls: the tap reports each request once, with its op, path,
// session and the server's answer; pings and watch events are not calls;
// requests unanswered when the connection ends, and any written after,
// are reported closed.
func TestTapCalls(t *testing.T) {
	rec := &recorder{}
	sc := &scriptConn{in: [][]byte{
		connectReply(4000, 0x77),
		append(reply(1, 5, 0), reply(-2, 5, 0)...),    // create answered, ping answered
		append(reply(-1, 6, 0), reply(2, 6, -101)...), // a watch event, then getData: no node
		reply(4, 6, -999),                             // multi: an unknown code
	}}
	c := tapped(t, rec, sc)
	for _, b := range [][]byte{
		frame(make([]byte, 40)), // connect
		pathRequest(1, 1, "/a"), pathRequest(-2, opPingCode, ""), pathRequest(2, 4, "/b"), pathRequest(3, 3, "/c"), pathRequest(4, 14, ""),
	} {
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 256)
	for {
		if _, err := c.Read(buf); err != nil {
			break
		}
	}
	if _, err := c.Write(pathRequest(5, 2, "/d")); err != nil {
		t.Fatal(err)
	}
	type call struct {
		op, path string
		err      error
	}
	want := []call{{"create", "/a", nil}, {"getData", "/b", zk.ErrNoNode}, {"multi", "", zk.ErrUnknown},
		{"exists", "/c", zk.ErrConnectionClosed}, {"delete", "/d", zk.ErrConnectionClosed}}
	if len(rec.calls) != len(want) {
		t.Fatalf("calls = %+v, want %d", rec.calls, len(want))
	}
	for i, w := range want {
		g := rec.calls[i]
		if g.Op != w.op || g.Path != w.path || g.SessionID != 0x77 || !errors.Is(g.Err, w.err) || (w.err == nil) != (g.Err == nil) {
			t.Errorf("call %d = %+v, want %+v in session 0x77", i, g, w)
		}
		if g.Duration < 0 {
			t.Errorf("call %d: negative duration %v", i, g.Duration)
		}
	}
	if s := rec.calls[2].Err.Error(); !strings.Contains(s, "-999") {
		t.Errorf("unknown code's error %q does not name it", s)
	}
}

// TestObservers: nil entries are dropped, one observer is returned as is,
// several each see every event.
func TestObservers(t *testing.T) {
	if Observers(nil, nil) != nil {
		t.Error("Observers of nils is not nil")
	}
	a, b := &recorder{}, &recorder{}
	if Observers(nil, a) != Observer(a) {
		t.Error("one observer is not returned as is")
	}
	Observers(a, nil, b).ObserveCall(CallEvent{Op: "sync"})
	if len(a.calls) != 1 || len(b.calls) != 1 {
		t.Errorf("calls seen: %d and %d, want 1 each", len(a.calls), len(b.calls))
	}
}

// TestSlogObserver: the attributes docs/observability.md names, at the
// levels it names.
func TestSlogObserver(t *testing.T) {
	if _, err := NewSlogObserver(nil); !errors.Is(err, ErrBadArgument) {
		t.Errorf("NewSlogObserver(nil) = %v, want ErrBadArgument", err)
	}
	var buf bytes.Buffer
	o, err := NewSlogObserver(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	o.ObserveCall(CallEvent{Op: "getData", Path: "/x", SessionID: 0x10, Duration: time.Millisecond, Err: zk.ErrNoNode})
	o.ObserveHolding(HoldingEvent{Phase: HoldingAcquired, Kind: "lock", Path: "/l/n", SessionID: 0x10, Waited: 2 * time.Second})
	o.ObserveHolding(HoldingEvent{Phase: HoldingEnded, Kind: "lock", Path: "/l/n", SessionID: 0x10, Held: time.Second, Cause: ErrSuspended})
	o.ObserveHolding(HoldingEvent{Phase: HoldingEnded, Kind: "lease", Path: "/s/n", Cause: ErrReleased})
	o.ObserveLease(LeaseEvent{Expired: true, SessionID: 0x10, Remaining: -time.Millisecond, Timeout: 4 * time.Second, Margin: 400 * time.Millisecond})
	o.ObserveState(StateChange{State: StateSuspended, SessionID: 0x10})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{
		`level=DEBUG msg="zookeeper call" op=getData path=/x session=0x10 duration=1ms err="zk: node does not exist"`,
		`level=DEBUG msg="zookeeper holding acquired" kind=lock path=/l/n session=0x10 waited=2s`,
		`level=WARN msg="zookeeper holding ended" kind=lock path=/l/n session=0x10 held=1s cause=`,
		`level=DEBUG msg="zookeeper holding ended" kind=lease path=/s/n session=0x0 held=0s cause=`,
		`level=WARN msg="zookeeper lease expired" session=0x10 remaining=-1ms timeout=4s margin=400ms`,
		`level=DEBUG msg="zookeeper state" state=suspended session=0x10`,
	}
	if len(lines) != len(want) {
		t.Fatalf("logged:\n%s\nwant %d lines", buf.String(), len(want))
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d = %s\nwant it to contain %s", i, lines[i], w)
		}
	}
}

// BenchmarkTapObserver measures the tap's cost per call (one getData
// request written, its reply read) without an observer and with one:
// without, the observer's sites cost a nil check each and no allocation.
func BenchmarkTapObserver(b *testing.B) {
	for _, bc := range []struct {
		name string
		o    Observer
	}{{"none", nil}, {"observer", BaseObserver{}}} {
		b.Run(bc.name, func(b *testing.B) {
			req, rep := pathRequest(1, 4, "/zkrecipes/bench/node"), reply(1, 9, 0)
			sc := &scriptConn{in: [][]byte{connectReply(4000, 0x77)}}
			c := tapped(b, bc.o, sc)
			buf := make([]byte, 64)
			if _, err := c.Write(frame(make([]byte, 40))); err != nil {
				b.Fatal(err)
			}
			if _, err := c.Read(buf); err != nil {
				b.Fatal(err)
			}
			sc.in, sc.loop = [][]byte{rep}, true
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := c.Write(req); err != nil {
					b.Fatal(err)
				}
				if _, err := c.Read(buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestLabels: the metric labels of outcomes and ends, in matching order.
func TestLabels(t *testing.T) {
	for err, want := range map[error]string{
		nil: "ok", zk.ErrNoNode: "no_node", fmt.Errorf("x: %w", zk.ErrConnectionClosed): "connection_closed",
		codeErr(-999): "error", codeErr(-103): "bad_version",
	} {
		if got := (CallEvent{Err: err}).Outcome(); got != want {
			t.Errorf("Outcome(%v) = %s, want %s", err, got, want)
		}
	}
	for cause, want := range map[error]string{
		ErrReleased: "released", ErrLeaseExpired: "lease_expired", ErrSuspended: "suspended",
		closedCause: "closed", fmt.Errorf("%w: session 0x1", ErrSessionLost): "session_lost",
		ErrNodeDeleted: "node_deleted", ErrRevoked: "revoked", errors.New("x"): "other",
	} {
		if got := (HoldingEvent{Phase: HoldingEnded, Cause: cause}).End(); got != want {
			t.Errorf("End(%v) = %s, want %s", cause, got, want)
		}
	}
	if e := (HoldingEvent{Phase: HoldingAcquired}); e.End() != "" || e.Lost() {
		t.Errorf("an acquisition: End %q, Lost %v", e.End(), e.Lost())
	}
}

// BenchmarkHoldingObserver measures the core's report of one holding
// (acquired, then ended when its context is cancelled) without an
// observer and with one; both include making and cancelling the
// holding's context.
func BenchmarkHoldingObserver(b *testing.B) {
	for _, bc := range []struct {
		name string
		o    Observer
	}{{"none", nil}, {"observer", BaseObserver{}}} {
		b.Run(bc.name, func(b *testing.B) {
			s := &Session{opts: options{observer: bc.o}}
			spec := &Spec{Role: RoleLock, begun: time.Now()}
			n := &node{path: "/zkrecipes/bench/_c_x-lock-0000000001", sid: 0x77}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				h := &Holding{node: n}
				h.ctx, h.cancel = context.WithCancelCause(context.Background())
				s.observeHolding(spec, h)
				h.cancel(ErrReleased)
			}
		})
	}
}
