package tap

import (
	"encoding/binary"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// TestWatchTable: the watch a read leaves and the watches an event fires
// are go-zookeeper v1.0.4's (GetW, ChildrenW, ExistsW, notifyWatches).
func TestWatchTable(t *testing.T) {
	left := []struct {
		op, code int32
		kind     tableKind
		ok       bool
	}{
		{opGetData, 0, tableData, true},
		{opGetData, codeNoNode, 0, false},
		{opExists, 0, tableData, true},
		{opExists, codeNoNode, tableExist, true},
		{opExists, -102, 0, false}, // no auth
		{opGetChildren, 0, tableChild, true},
		{opGetChildren2, 0, tableChild, true},
		{opGetChildren2, codeNoNode, 0, false},
		{opCreate, 0, 0, false},
	}
	for _, c := range left {
		if kind, ok := watchLeft(c.op, c.code); ok != c.ok || kind != c.kind {
			t.Errorf("watchLeft(op %d, code %d) = %d, %v; want %d, %v", c.op, c.code, kind, ok, c.kind, c.ok)
		}
	}
	fired := map[int32][]tableKind{
		eventNodeCreated:         {tableExist},
		eventNodeDataChanged:     {tableExist, tableData},
		eventNodeChildrenChanged: {tableChild},
		eventNodeDeleted:         {tableExist, tableData, tableChild},
		-1:                       nil, // a session event
		5:                        nil, // EventNotWatching
	}
	for typ, want := range fired {
		got := firedKinds(typ)
		if len(got) != len(want) {
			t.Errorf("firedKinds(%d) = %v, want %v", typ, got, want)
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("firedKinds(%d) = %v, want %v", typ, got, want)
			}
		}
	}
}

func watchReadFrame(xid, op int32, path string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(xid))
	b = binary.BigEndian.AppendUint32(b, uint32(op))
	b = binary.BigEndian.AppendUint32(b, uint32(len(path)))
	b = append(b, path...)
	return frame(append(b, 1)) // watch
}

func watchEventFrame(typ int32, path string) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0xffffffff) // xid -1
	b = binary.BigEndian.AppendUint64(b, 0xffffffffffffffff)
	b = binary.BigEndian.AppendUint32(b, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(typ))
	b = binary.BigEndian.AppendUint32(b, 3) // connected
	b = binary.BigEndian.AppendUint32(b, uint32(len(path)))
	return frame(append(b, path...))
}

// TestTapGate: on a reconnection under the same session while
// go-zookeeper holds watches, a reply with a zxid is held until the
// setWatches frame is written; replies of the first connection, of a new
// session, without watches held, or without a zxid are not. A watch
// event forgets what it fired. With no setWatches the reply goes through
// after GateFallback, reported.
func TestTapGate(t *testing.T) {
	defer func(d time.Duration) { GateFallback = d }(GateFallback)
	GateFallback = 300 * time.Millisecond
	var stalls atomic.Int32
	tap := New(Sinks{Stalled: func() { stalls.Add(1) }})
	dial := func(in ...[]byte) net.Conn {
		w := &wireConn{in: in}
		c, err := tap.Dialer(func(string, string, time.Duration) (net.Conn, error) { return w, nil })("tcp", "x", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	write := func(c net.Conn, b []byte) {
		t.Helper()
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	// readAsync starts one Read; its channel is closed when it returns.
	readAsync := func(c net.Conn) chan struct{} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = c.Read(make([]byte, 1<<10))
		}()
		return done
	}
	read := func(c net.Conn, what string) {
		t.Helper()
		select {
		case <-readAsync(c):
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the read was held", what)
		}
	}
	held := func(done chan struct{}, what string) {
		t.Helper()
		select {
		case <-done:
			t.Fatalf("%s: the read was not held", what)
		case <-time.After(100 * time.Millisecond): // bounded look: still waiting
		}
	}
	watched := func() int {
		tap.mu.Lock()
		defer tap.mu.Unlock()
		return len(tap.watches)
	}

	// First connection of session 5: a data watch on /a, a child watch
	// on /b, an exist watch on /c (no node), and a read without watch.
	c1 := dial(connectResponse(10000, 5), reply(1, 0x10, 0), reply(2, 0x11, 0), reply(3, 0x12, codeNoNode), reply(4, 0x13, 0))
	write(c1, frame(make([]byte, 40)))
	write(c1, watchReadFrame(1, opGetData, "/a"))
	write(c1, watchReadFrame(2, opGetChildren2, "/b"))
	write(c1, watchReadFrame(3, opExists, "/c"))
	write(c1, request(4, opGetData))
	for i := range 5 {
		read(c1, fmt.Sprint("first connection, frame ", i))
	}
	if n := watched(); n != 3 {
		t.Fatalf("watch table holds %d, want 3", n)
	}

	// Reconnection: the setAuth reply (zxid 0) and a watch event pass; the
	// queued request's reply waits for the setWatches.
	c2 := dial(connectResponse(10000, 5), reply(5, 0, 0), reply(6, 0x20, 0), reply(7, 0x21, 0))
	write(c2, frame(make([]byte, 40)))
	read(c2, "handshake")
	read(c2, "setAuth reply")
	write(c2, request(6, opGetData))
	done := readAsync(c2)
	held(done, "reply before setWatches")
	write(c2, setWatches(7, 0x13))
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the reply was still held after the setWatches was written")
	}
	read(c2, "setWatches reply")

	// Events forget what they fired (/a's data change its data watch,
	// /c's creation its exist watch). With /b's child watch left, a
	// reconnection whose setWatches never comes lets the reply through
	// after GateFallback, reported.
	c4 := dial(connectResponse(10000, 5), watchEventFrame(eventNodeDataChanged, "/a"), watchEventFrame(eventNodeCreated, "/c"), reply(8, 0x30, 0))
	write(c4, frame(make([]byte, 40)))
	read(c4, "handshake")
	read(c4, "event /a")
	read(c4, "event /c")
	if n := watched(); n != 1 {
		t.Fatalf("after the events the watch table holds %d, want 1 (/b)", n)
	}
	write(c4, request(8, opGetData))
	read(c4, "reply with no setWatches coming (fallback)")
	if n := stalls.Load(); n != 1 {
		t.Errorf("fallbacks reported: %d, want 1", n)
	}

	// A new session empties the table: nothing held.
	c5 := dial(connectResponse(10000, 6), reply(9, 0x40, 0))
	write(c5, frame(make([]byte, 40)))
	read(c5, "handshake")
	write(c5, request(9, opGetData))
	read(c5, "reply on a new session")
	if n := watched(); n != 0 {
		t.Errorf("after a new session the watch table holds %d", n)
	}
	if n := stalls.Load(); n != 1 {
		t.Errorf("fallbacks reported: %d, want 1", n)
	}
}
