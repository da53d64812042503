package lock_test

import (
	"context"
	"encoding/binary"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/internal/zkframe"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
)

// wireOrder records, below the Session's tap, each request written (its
// xid and op) and each reply read (its xid), in the order they passed.
type wireOrder struct {
	mu     sync.Mutex
	events []wireEvent
}

type wireEvent struct {
	out     bool // a request written; else a reply read
	xid, op int32
}

type wireOrderConn struct {
	net.Conn
	w       *wireOrder
	out, in *zkframe.Splitter
}

func (w *wireOrder) wrap(c net.Conn) net.Conn {
	return &wireOrderConn{Conn: c, w: w, out: zkframe.New(8), in: zkframe.New(4)}
}

func (c *wireOrderConn) Write(b []byte) (int, error) {
	c.w.mu.Lock()
	_ = c.out.Feed(b, func(f zkframe.Frame) error {
		if !f.First && len(f.Head) >= 8 {
			c.w.events = append(c.w.events, wireEvent{out: true,
				xid: int32(binary.BigEndian.Uint32(f.Head[0:4])), op: int32(binary.BigEndian.Uint32(f.Head[4:8]))})
		}
		return nil
	})
	c.w.mu.Unlock()
	return c.Conn.Write(b)
}

func (c *wireOrderConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.w.mu.Lock()
	_ = c.in.Feed(b[:n], func(f zkframe.Frame) error {
		if !f.First && len(f.Head) >= 4 {
			c.w.events = append(c.w.events, wireEvent{xid: int32(binary.BigEndian.Uint32(f.Head[0:4]))})
		}
		return nil
	})
	c.w.mu.Unlock()
	return n, err
}

const (
	wireCreate       = 1
	wireGetChildren2 = 12
)

// pipelined reports, for each create request in order, whether the next
// getChildren request was written before the create's reply was read.
func (w *wireOrder) pipelined(t *testing.T) []bool {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	var got []bool
	for i, e := range w.events {
		if !e.out || e.op != wireCreate {
			continue
		}
		listAt, replyAt := -1, -1
		for j := i + 1; j < len(w.events) && (listAt < 0 || replyAt < 0); j++ {
			f := w.events[j]
			if f.out && f.op == wireGetChildren2 && listAt < 0 {
				listAt = j
			}
			if !f.out && f.xid == e.xid && replyAt < 0 {
				replyAt = j
			}
		}
		if listAt < 0 || replyAt < 0 {
			t.Fatalf("create %d: listing at %d, reply at %d", e.xid, listAt, replyAt)
		}
		got = append(got, listAt < replyAt)
	}
	return got
}

// TestLockPipelined: an uncontended Lock under a parent the Session has
// created under before writes its getChildren right behind its create,
// before the create's reply arrives (one round trip; recipes/pipeline.go),
// and still costs 1 create + 1 getChildren; the first Lock under a parent
// waits for the create's reply (the parent may be missing).
func TestLockPipelined(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	ensurePath(t, admin, path, nil)
	w := &wireOrder{}
	s := testutil.ConnectWrapped(t, e.Addrs(), w.wrap)
	m := newMutex(t, s, path)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range 4 {
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	got := w.pipelined(t)
	want := []bool{false, true, true, true}
	if len(got) != len(want) {
		t.Fatalf("%d creates on the wire, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Lock %d: listing written before the create's reply = %v, want %v", i+1, got[i], want[i])
		}
	}

	// The cost is unchanged: 1 create + 1 getChildren.
	c, cc := countedSession(t, e.Addrs())
	mc := newMutex(t, c, path)
	for i := range 2 {
		before := cc.Snapshot()
		if err := mc.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		d := cc.Snapshot().Sub(before)
		if i == 1 { // pipelined
			wantOps(t, "pipelined Lock", d, map[zkcount.Op]int64{zkcount.OpCreate: 1, zkcount.OpGetChildren2: 1})
		}
		if err := mc.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
