package bench

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
)

// frame builds one length-prefixed frame of big-endian int32 fields and pad
// filler bytes.
func frame(pad int, fields ...int32) []byte {
	body := make([]byte, 0, 4*len(fields)+pad)
	for _, f := range fields {
		body = binary.BigEndian.AppendUint32(body, uint32(f))
	}
	body = append(body, make([]byte, pad)...)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// reply builds a server frame: xid, zxid, err, then extra int32 fields.
func reply(xid int32, zxid int64, errc int32, extra ...int32) []byte {
	body := binary.BigEndian.AppendUint32(nil, uint32(xid))
	body = binary.BigEndian.AppendUint64(body, uint64(zxid))
	body = binary.BigEndian.AppendUint32(body, uint32(errc))
	for _, e := range extra {
		body = binary.BigEndian.AppendUint32(body, uint32(e))
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

func join(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestProxyCounts sends a canned client stream (connect, create,
// getChildren2, ping, getData, delete, close) through the proxy to a fake
// server that answers with a canned stream (connect response, replies, two
// watch notifications, a ping reply), both cut into odd pieces, and checks
// the bytes arrive intact and the counts are right.
func TestProxyCounts(t *testing.T) {
	before := runtime.NumGoroutine()
	clientStream := join(
		frame(40, 0, 0), // connect request: no header
		frame(30, 1, int32(zkcount.OpCreate)),
		frame(9, 2, int32(zkcount.OpGetChildren2)),
		frame(0, -2, int32(zkcount.OpPing)),
		frame(12, 3, int32(zkcount.OpGetData)),
		frame(12, 4, int32(zkcount.OpDelete)),
		frame(0, 5, int32(zkcount.OpClose)),
	)
	serverStream := join(
		frame(28, 0, 4000), // connect response
		reply(1, 10, 0), reply(2, 10, 0), reply(-2, 10, 0), reply(3, 10, 0),
		reply(-1, -1, 0, 2, 3, 0), // NodeDeleted notification
		reply(4, 11, 0),
		reply(-1, -1, 0, 4, 3, 0), // NodeChildrenChanged notification
		reply(5, 12, 0),
	)

	srv, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var got []byte
	var wg sync.WaitGroup
	wg.Go(func() {
		c, err := srv.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		for i := 0; i < len(serverStream); i += 7 {
			if _, err := c.Write(serverStream[i:min(i+7, len(serverStream))]); err != nil {
				return
			}
		}
		got, _ = io.ReadAll(io.LimitReader(c, int64(len(clientStream))))
	})

	counter := zkcount.New()
	p, err := NewProxy([]string{srv.Addr().String()}, counter)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", p.Addrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(clientStream); i += 5 {
		if _, err := c.Write(clientStream[i:min(i+5, len(clientStream))]); err != nil {
			t.Fatal(err)
		}
	}
	back, err := io.ReadAll(io.LimitReader(c, int64(len(serverStream))))
	if err != nil || !bytes.Equal(back, serverStream) {
		t.Fatalf("client read %d bytes (%v), want the server's %d intact", len(back), err, len(serverStream))
	}
	wg.Wait()
	if !bytes.Equal(got, clientStream) {
		t.Fatalf("server read %d bytes, want the client's %d intact", len(got), len(clientStream))
	}
	waitFor(t, 5*time.Second, "every frame counted", func() bool { return counter.Snapshot().Total() == 5 })
	s := counter.Snapshot()
	want := map[zkcount.Op]int64{zkcount.OpCreate: 1, zkcount.OpGetChildren2: 1, zkcount.OpGetData: 1, zkcount.OpDelete: 1, zkcount.OpClose: 1}
	for op, n := range want {
		if s.Req(op) != n {
			t.Errorf("%v: %d requests, want %d (all: %v)", op, s.Req(op), n, s.Requests)
		}
	}
	if s.Connects != 1 || s.Pings != 1 || s.Notifications != 2 || s.Corrupt != 0 {
		t.Errorf("counts = %+v, want 1 connect, 1 ping, 2 notifications, nothing corrupt", s)
	}
	co := cost(s, 1)
	if co.Requests != 5 || co.Lists != 1 || co.Notifications != 2 || co.ByOp["getData"] != 1 {
		t.Errorf("cost = %+v", co)
	}

	_ = c.Close()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := net.DialTimeout("tcp", p.Addrs()[0], time.Second); err == nil {
		t.Error("the proxy still accepts connections after Close")
	}
	waitFor(t, 5*time.Second, "the proxy's goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
}

// TestProxyCloseDropsClients checks that Close ends connections still open
// through the proxy (the client sees EOF) and returns.
func TestProxyCloseDropsClients(t *testing.T) {
	srv, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := srv.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	p, err := NewProxy([]string{srv.Addr().String()}, zkcount.New())
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", p.Addrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	up := <-accepted
	defer up.Close()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("read succeeded on a connection the proxy closed")
	}
}
