package testenv

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestLinkToxics shows that each wire fault does to a real client what its
// doc says. Toxics live in this process, so one backend is enough.
func TestLinkToxics(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real ZooKeeper ensemble")
	}
	e := New(t, Config{Servers: 1, Backend: quickBackend()})
	observer := connect(t, e.DirectAddrs(), 4*time.Second)
	acl := zk.WorldACL(zk.PermAll)

	t.Run("half-open applies requests but loses responses", func(t *testing.T) {
		l, err := e.NewLink("half-open")
		if err != nil {
			t.Fatal(err)
		}
		c := connect(t, l.Addrs(), 2*time.Second)
		if err := l.HalfOpen(); err != nil {
			t.Fatal(err)
		}
		_, err = c.conn.Create("/half-open", []byte("x"), 0, acl)
		if err == nil {
			t.Fatal("create answered through a half-open link")
		}
		waitFor(t, 10*time.Second, "the create to be applied", func() bool {
			ok, _, _ := observer.conn.Exists("/half-open")
			return ok
		})
		if err := l.Heal(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 10*time.Second, "the session back", func() bool { return c.conn.State() == zk.StateHasSession })
	})

	t.Run("latency delays responses", func(t *testing.T) {
		l, err := e.NewLink("latency")
		if err != nil {
			t.Fatal(err)
		}
		c := connect(t, l.Addrs(), 4*time.Second)
		if err := l.Latency(300*time.Millisecond, 0); err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		if _, _, err := c.conn.Exists("/"); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(began); took < 300*time.Millisecond {
			t.Fatalf("exists took %v through 300ms of latency", took)
		}
		if err := l.Heal(); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("limit_data and reset_peer drop the connection", func(t *testing.T) {
		for _, fault := range []func(l *Link) error{
			func(l *Link) error { return l.LimitData(64) },
			func(l *Link) error { return l.ResetPeer(0) },
		} {
			l, err := e.NewLink("drop")
			if err != nil {
				t.Fatal(err)
			}
			c := connect(t, l.Addrs(), 4*time.Second)
			if err := fault(l); err != nil {
				t.Fatal(err)
			}
			// Enough traffic to pass 64 bytes of responses.
			for i := 0; i < 20 && !c.saw(zk.StateDisconnected); i++ {
				_, _, _ = c.conn.Get("/")
			}
			waitFor(t, 10*time.Second, "a disconnect", func() bool { return c.saw(zk.StateDisconnected) })
			if err := l.Heal(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 10*time.Second, "the session back", func() bool { return c.conn.State() == zk.StateHasSession })
		}
	})

	t.Run("limit_data_each gives each connection its own count", func(t *testing.T) {
		const min, spread, seed = 100, 400, 42
		l, err := e.NewLink("drop-each")
		if err != nil {
			t.Fatal(err)
		}
		if err := l.LimitDataEach(min, spread, seed); err != nil {
			t.Fatal(err)
		}
		// Each raw connection asks for a session and sends 60 pings (20
		// bytes of reply each, 1200 in all): it receives exactly its own
		// count, then the connection closes.
		ping := []byte{0, 0, 0, 8, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 11}
		counts := map[int64]bool{}
		for k := uint64(1); k <= 3; k++ {
			c, err := net.DialTimeout("tcp", l.Addrs()[0], 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			msg := connectFrame(0, 0, 0) // last zxid seen 0: a standalone server's zxids are small
			for range 60 {
				msg = append(msg, ping...)
			}
			if _, err := c.Write(msg); err != nil {
				t.Fatal(err)
			}
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			n, err := io.Copy(io.Discard, c)
			c.Close()
			if err != nil {
				t.Fatalf("connection %d: %v after %d bytes (want it closed)", k, err, n)
			}
			if want := limitFor(min, spread, seed, k); n != want {
				t.Errorf("connection %d received %d bytes, want %d", k, n, want)
			}
			counts[n] = true
		}
		if len(counts) < 2 {
			t.Errorf("three connections, one count: %v", counts)
		}
		if err := l.Heal(); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("bandwidth, slicer and slow close still deliver", func(t *testing.T) {
		l, err := e.NewLink("slow")
		if err != nil {
			t.Fatal(err)
		}
		c := connect(t, l.Addrs(), 4*time.Second)
		if err := l.Bandwidth(16); err != nil {
			t.Fatal(err)
		}
		if err := l.Slicer(8, 4, time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if err := l.SlowClose(100 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		data, _, err := c.conn.Get("/half-open")
		if err != nil || string(data) != "x" {
			t.Fatalf("get through a slow link: %q, %v", data, err)
		}
		if err := l.Heal(); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("cut after the next frame delivers that frame, then nothing", func(t *testing.T) {
		l, err := e.NewLink("cut-frame")
		if err != nil {
			t.Fatal(err)
		}
		c := connect(t, l.Addrs(), 4*time.Second)
		_, _, ch, err := c.conn.ExistsW("/cut-frame")
		if err != nil {
			t.Fatal(err)
		}
		if err := l.CutAfterNextFrame(); err != nil {
			t.Fatal(err)
		}
		if _, err := observer.conn.Create("/cut-frame", nil, 0, acl); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-ch:
			if ev.Type != zk.EventNodeCreated {
				t.Fatalf("watch event %v, want node created", ev.Type)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the frame after the fault was set was not delivered")
		}
		// Nothing sent after that frame reaches the server, and no answer
		// comes back: the request fails with go-zookeeper's own timeout.
		if _, err := c.conn.Create("/cut-frame-after", nil, 0, acl); err == nil {
			t.Fatal("create answered after the cut")
		}
		if ok, _, err := observer.conn.Exists("/cut-frame-after"); err != nil || ok {
			t.Fatalf("a create sent after the cut reached the server: %v, %v", ok, err)
		}
		if err := l.Heal(); err != nil {
			t.Fatal(err)
		}
		if len(l.gates) != 0 {
			t.Fatalf("gates kept after Heal: %v", l.gates)
		}
	})

	t.Run("a closed link refuses faults", func(t *testing.T) {
		l, err := e.NewLink("closed")
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if err := l.Blackhole(); !errors.Is(err, ErrClosed) {
			t.Fatalf("Blackhole on a closed link: %v", err)
		}
	})
}

// TestLimitFor: a connection's budget is in [min, min+spread), the same
// for the same seed and order, and varies with the order.
func TestLimitFor(t *testing.T) {
	for _, tc := range []struct {
		min, spread int64
		seed        uint64
	}{{200, 1800, 0}, {200, 1800, 3490472648}, {100, 1, 7}, {64, 0, 7}, {64, -5, 7}} {
		seen := map[int64]bool{}
		for k := uint64(1); k <= 200; k++ {
			n := limitFor(tc.min, tc.spread, tc.seed, k)
			if n != limitFor(tc.min, tc.spread, tc.seed, k) {
				t.Fatalf("%+v: connection %d: not deterministic", tc, k)
			}
			if hi := tc.min + max(tc.spread, 1); n < tc.min || n >= hi {
				t.Fatalf("%+v: connection %d: %d outside [%d, %d)", tc, k, n, tc.min, hi)
			}
			seen[n] = true
		}
		if tc.spread > 100 && len(seen) < 100 {
			t.Errorf("%+v: 200 connections, only %d budgets", tc, len(seen))
		}
	}
}
