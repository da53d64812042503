package testenv

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"
)

// connectFrame is a connect request frame as go-zookeeper writes it.
func connectFrame(zxid, sid int64, passwd byte) []byte {
	b := make([]byte, connectRequestLen)
	binary.BigEndian.PutUint32(b[0:4], connectRequestLen-4)
	binary.BigEndian.PutUint64(b[8:16], uint64(zxid)) // last zxid seen
	binary.BigEndian.PutUint32(b[16:20], 3000)        // timeout
	binary.BigEndian.PutUint64(b[20:28], uint64(sid)) // session id
	binary.BigEndian.PutUint32(b[28:32], 16)          // password length
	copy(b[32:48], bytes.Repeat([]byte{passwd}, 16))  // password
	return b
}

// TestSessionDropper checks that a dropped session's connect request asks
// for a new session, and that nothing else is touched: another session's
// request, a request before the drop, and every frame after the first.
func TestSessionDropper(t *testing.T) {
	const sid = 0x1000abc
	written := func(d *SessionDropper, frames ...[]byte) [][]byte {
		t.Helper()
		client, server := net.Pipe()
		d.Base = func(string, string, time.Duration) (net.Conn, error) { return client, nil }
		c, err := d.Dial("tcp", "x", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var out [][]byte
		for _, f := range frames {
			got := make([]byte, len(f))
			done := make(chan error, 1)
			go func() { _, err := io.ReadFull(server, got); done <- err }()
			if _, err := c.Write(f); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			out = append(out, got)
		}
		return out
	}
	d := &SessionDropper{}
	if got := written(d, connectFrame(0x1234, sid, 7)); !bytes.Equal(got[0], connectFrame(0x1234, sid, 7)) {
		t.Errorf("before the drop: %x", got[0])
	}
	d.Drop(sid)
	got := written(d, connectFrame(0x1234, sid, 7), connectFrame(0x1234, sid, 7))
	if want := connectFrame(0, 0, 0); !bytes.Equal(got[0], want) {
		t.Errorf("dropped: %x, want %x (last zxid 0, session 0, zero password, the timeout kept)", got[0], want)
	}
	if !bytes.Equal(got[1], connectFrame(0x1234, sid, 7)) {
		t.Errorf("a second frame was rewritten: %x", got[1])
	}
	if got := written(d, connectFrame(0x1234, sid+1, 7)); !bytes.Equal(got[0], connectFrame(0x1234, sid+1, 7)) {
		t.Errorf("another session's request was rewritten: %x", got[0])
	}
	if droppedRequest(connectFrame(0x1234, sid, 7)[:40], sid) || droppedRequest(connectFrame(0x1234, sid, 7), 0) {
		t.Error("a short frame, or no session dropped, must not match")
	}
}
