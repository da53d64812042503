package tap

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"
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

func (c *scriptConn) Close() error { return nil }

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

// tapped returns a connection through a tap with sink calls (nil: none)
// over sc.
func tapped(t testing.TB, calls func([]Call), sc *scriptConn) net.Conn {
	tap := New(Sinks{Calls: calls})
	c, err := tap.Dialer(func(string, string, time.Duration) (net.Conn, error) { return sc, nil })("tcp", "x", time.Second)
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
	var got []Call
	rec := func(calls []Call) { got = append(got, calls...) }
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
	want := []Call{{Op: 1, Path: "/a"}, {Op: 4, Path: "/b", Code: -101}, {Op: 14, Code: -999},
		{Op: 3, Path: "/c", Closed: true}, {Op: 2, Path: "/d", Closed: true}}
	if len(got) != len(want) {
		t.Fatalf("calls = %+v, want %d", got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Op != w.Op || g.Path != w.Path || g.SessionID != 0x77 || g.Code != w.Code || g.Closed != w.Closed {
			t.Errorf("call %d = %+v, want %+v in session 0x77", i, g, w)
		}
		if g.Duration < 0 {
			t.Errorf("call %d: negative duration %v", i, g.Duration)
		}
	}
}

// BenchmarkTapCalls measures the tap's cost per call (one getData
// request written, its reply read) without a sink of calls and with one:
// without, the timing's sites cost a nil check each and no allocation.
func BenchmarkTapCalls(b *testing.B) {
	for _, bc := range []struct {
		name string
		o    func([]Call)
	}{{"none", nil}, {"sink", func([]Call) {}}} {
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
