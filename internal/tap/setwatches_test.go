package tap

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"
	"time"
)

// wireConn is a net.Conn whose reads return the frames queued in in, one
// Read per frame, and whose writes are kept in out.
type wireConn struct {
	net.Conn // nil: only the methods below are used
	in       [][]byte
	out      [][]byte
}

func (c *wireConn) Read(b []byte) (int, error) {
	f := c.in[0]
	c.in = c.in[1:]
	return copy(b, f), nil
}

func (c *wireConn) Write(b []byte) (int, error) {
	c.out = append(c.out, bytes.Clone(b))
	return len(b), nil
}

func (c *wireConn) Close() error { return nil }

func setWatches(xid int32, relative int64) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(xid))
	b = binary.BigEndian.AppendUint32(b, opSetWatches)
	b = binary.BigEndian.AppendUint64(b, uint64(relative))
	b = binary.BigEndian.AppendUint32(b, 1) // data watches: one path
	b = binary.BigEndian.AppendUint32(b, 2)
	b = append(b, "/a"...)
	b = binary.BigEndian.AppendUint32(b, 0) // no exist watches
	b = binary.BigEndian.AppendUint32(b, 0) // no child watches
	return frame(b)
}

func relativeZxid(t *testing.T, f []byte) int64 {
	t.Helper()
	if len(f) < 20 || int32(binary.BigEndian.Uint32(f[8:12])) != opSetWatches {
		t.Fatalf("not a setWatches frame: %x", f)
	}
	return int64(binary.BigEndian.Uint64(f[12:20]))
}

// TestTapFixesSetWatches: a setWatches written on a new connection after
// a reply of that connection raised go-zookeeper's lastZxid is sent with
// the zxid of the last reply read before the connection began (what
// go-zookeeper meant to send); one at or below it goes out unchanged.
// Replies that go-zookeeper does not record (zxid 0, as ZooKeeper answers
// setAuth; watch events; pings) do not count, and an expiry resets it.
func TestTapFixesSetWatches(t *testing.T) {
	var fixes [][2]int64
	tap := New(Sinks{Fixed: func(from, to int64) { fixes = append(fixes, [2]int64{from, to}) }})
	dial := func(in ...[]byte) (net.Conn, *wireConn) {
		w := &wireConn{in: in}
		c, err := tap.Dialer(func(string, string, time.Duration) (net.Conn, error) { return w, nil })("tcp", "x", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return c, w
	}
	read := func(c net.Conn, n int) {
		buf := make([]byte, 1<<10)
		for range n {
			if _, err := c.Read(buf); err != nil {
				t.Fatal(err)
			}
		}
	}
	write := func(c net.Conn, b []byte) {
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
	}

	// First connection: a reply with zxid 0x10, then frames that do not
	// count: a setAuth reply (zxid 0), a watch event, a ping reply.
	c1, _ := dial(connectResponse(10000, 5), reply(1, 0x10, 0), reply(2, 0, 0), reply(-1, -1, 0), reply(-2, 0x20, 0))
	write(c1, frame(make([]byte, 40)))
	read(c1, 5)

	// Second connection: a queued request's reply (zxid 0x30) is read
	// before go-zookeeper builds its setWatches with it.
	c2, w2 := dial(connectResponse(10000, 5), reply(3, 0x30, 0))
	write(c2, frame(make([]byte, 40)))
	read(c2, 2)
	write(c2, setWatches(4, 0x30))
	write(c2, setWatches(5, 0x8))
	if got := relativeZxid(t, w2.out[1]); got != 0x10 {
		t.Errorf("setWatches above the base sent with 0x%x, want 0x10", got)
	}
	if got := relativeZxid(t, w2.out[2]); got != 0x8 {
		t.Errorf("setWatches below the base sent with 0x%x, want it unchanged (0x8)", got)
	}
	if len(fixes) != 1 || fixes[0] != [2]int64{0x30, 0x10} {
		t.Errorf("corrections reported: %x, want one from 0x30 to 0x10", fixes)
	}

	// A setWatches split over two writes is not recognised: sent as is.
	sw := setWatches(6, 0x30)
	write(c2, sw[:10])
	write(c2, sw[10:])
	if got := append(bytes.Clone(w2.out[3]), w2.out[4]...); !bytes.Equal(got, sw) {
		t.Errorf("split setWatches changed: %x", got)
	}

	// An expiry resets what go-zookeeper saw: nothing to correct against.
	c3, w3 := dial(connectResponse(10000, 0))
	write(c3, frame(make([]byte, 40)))
	read(c3, 1)
	c4, w4 := dial(connectResponse(10000, 6))
	write(c4, frame(make([]byte, 40)))
	read(c4, 1)
	write(c4, setWatches(1, 0x30))
	if got := relativeZxid(t, w4.out[1]); got != 0x30 || len(w3.out) != 1 {
		t.Errorf("after an expiry, setWatches sent with 0x%x, want it unchanged", got)
	}
}
