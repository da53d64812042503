package recipes_test

import (
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/recipes"
)

func TestSessionStates(t *testing.T) {
	e := ensemble(t)
	link, err := e.NewLink("states")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s := connect(t, link.Addrs())
	if s.State() != recipes.StateConnected || s.ID() == 0 {
		t.Fatalf("after connect: %v 0x%x", s.State(), s.ID())
	}
	sub := s.Subscribe()
	defer sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	next := func(want recipes.State) recipes.StateChange {
		t.Helper()
		c, err := sub.Next(ctx)
		if err != nil || c.State != want {
			t.Fatalf("next = %v, %v; want %v", c.State, err, want)
		}
		return c
	}
	first := next(recipes.StateConnected)
	id := first.SessionID

	// A cut shorter than the session timeout: suspended, then reconnected
	// under the same session.
	if err := link.Cut(); err != nil {
		t.Fatal(err)
	}
	next(recipes.StateSuspended)
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	if c := next(recipes.StateReconnected); c.SessionID != id {
		t.Fatalf("reconnected under 0x%x, want 0x%x", c.SessionID, id)
	}

	// Expiry: lost, then a new session reported as connected.
	if err := link.ExpireSession(ctx, id); err != nil {
		t.Fatal(err)
	}
	for {
		c, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.State == recipes.StateSuspended {
			continue
		}
		if c.State != recipes.StateLost || c.SessionID != id {
			t.Fatalf("got %v 0x%x, want lost 0x%x", c.State, c.SessionID, id)
		}
		break
	}
	if c := next(recipes.StateConnected); c.SessionID == id || c.SessionID == 0 || s.ID() != c.SessionID {
		t.Fatalf("new session 0x%x (old 0x%x, ID() 0x%x)", c.SessionID, id, s.ID())
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	next(recipes.StateClosed)
	if _, err := sub.Next(ctx); !errors.Is(err, recipes.ErrClosed) {
		t.Fatalf("Next after close = %v", err)
	}
	if err := s.CloseContext(ctx); err != nil {
		t.Fatalf("second Close = %v", err)
	}
}

func TestSessionBadInput(t *testing.T) {
	ctx := context.Background()
	if _, err := recipes.Connect(ctx, nil); !errors.Is(err, recipes.ErrBadArgument) {
		t.Fatalf("Connect(nil) = %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := recipes.Connect(cancelled, []string{"127.0.0.1:1"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Connect(cancelled) = %v", err)
	}
	short, cancel2 := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel2()
	if _, err := recipes.Connect(short, []string{"127.0.0.1:1"}, recipes.WithLogger(testLogger())); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Connect(unreachable) = %v", err)
	}
	var s *recipes.Session
	if s.ID() != 0 || s.State() != recipes.StateClosed || s.Conn() != nil {
		t.Fatal("nil session accessors")
	}
	if err := s.Close(); !errors.Is(err, recipes.ErrNilSession) {
		t.Fatalf("nil Close = %v", err)
	}
	if err := s.CloseContext(ctx); !errors.Is(err, recipes.ErrNilSession) {
		t.Fatalf("nil CloseContext = %v", err)
	}
	if _, err := s.Subscribe().Next(ctx); !errors.Is(err, recipes.ErrNilSession) {
		t.Fatalf("nil Subscribe().Next = %v", err)
	}
	if _, err := recipes.Acquire(ctx, nil, recipes.Spec{Path: "/x"}); !errors.Is(err, recipes.ErrNilSession) {
		t.Fatalf("Acquire(nil session) = %v", err)
	}
	if _, err := recipes.FencedMulti(ctx, nil, recipes.Fence{}); !errors.Is(err, recipes.ErrNilSession) {
		t.Fatalf("FencedMulti(nil session) = %v", err)
	}
}

func TestClosedSession(t *testing.T) {
	e := ensemble(t)
	s := connect(t, e.Addrs())
	ctx := context.Background()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := recipes.Acquire(ctx, s, recipes.Spec{Path: testPath(t)}); !errors.Is(err, recipes.ErrClosed) {
		t.Fatalf("Acquire on closed session = %v", err)
	}
	if _, err := recipes.Contenders(ctx, s, recipes.Curator, "/"); !errors.Is(err, recipes.ErrClosed) {
		t.Fatalf("Contenders on closed session = %v", err)
	}
}

func TestDataTooLarge(t *testing.T) {
	e := ensemble(t)
	s := connect(t, e.Addrs())
	ctx := context.Background()
	_, err := recipes.Acquire(ctx, s, recipes.Spec{Path: testPath(t), Data: make([]byte, recipes.DefaultMaxData+1)})
	if !errors.Is(err, recipes.ErrDataTooLarge) {
		t.Fatalf("Acquire with large data = %v", err)
	}
	h, err := recipes.Acquire(ctx, s, recipes.Spec{Path: testPath(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release(ctx)
	_, err = recipes.FencedMulti(ctx, s, h.Fence(), &zk.SetDataRequest{Path: testPath(t), Data: make([]byte, recipes.DefaultMaxData+1), Version: -1})
	if !errors.Is(err, recipes.ErrDataTooLarge) {
		t.Fatalf("FencedMulti with large data = %v", err)
	}
	_, err = recipes.FencedMulti(ctx, s, h.Fence(), &zk.SetDataRequest{Path: "/zookeeper/x", Version: -1})
	if !errors.Is(err, recipes.ErrInvalidPath) {
		t.Fatalf("FencedMulti under /zookeeper = %v", err)
	}
}

// errDone is a caller's own cause for the close tests.
var errDone = errors.New("test: done with the session")

// TestSessionCloser: a Session is an io.Closer. Close needs no context,
// ends the session (its holdings are cancelled with ErrClosed, its
// ephemeral nodes go), and closing again returns nil. CloseContext with an
// already-done ctx still closes the session but returns ctx's error (both
// context.Canceled and the caller's cause match) without waiting.
func TestSessionCloser(t *testing.T) {
	e := ensemble(t)
	admin := connect(t, e.Addrs())
	path := testPath(t)
	ctx := context.Background()

	s := connect(t, e.Addrs())
	h, err := recipes.Acquire(ctx, s, recipes.Spec{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	var c io.Closer = s
	if err := c.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if s.State() != recipes.StateClosed || !errors.Is(context.Cause(h.Context()), recipes.ErrClosed) {
		t.Fatalf("after Close: state %v, holding cause %v", s.State(), context.Cause(h.Context()))
	}
	waitFor(t, 10*time.Second, "the closed session's node to go", func() bool { return len(rawChildren(t, admin, path)) == 0 })
	if err := c.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}

	s2 := connect(t, e.Addrs())
	h2, err := recipes.Acquire(ctx, s2, recipes.Spec{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancelCause(ctx)
	cancel(errDone)
	err = s2.CloseContext(done)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, errDone) {
		t.Fatalf("CloseContext(done ctx) = %v, want context.Canceled and the cause", err)
	}
	if s2.State() != recipes.StateClosed || !errors.Is(context.Cause(h2.Context()), recipes.ErrClosed) {
		t.Fatalf("after CloseContext(done ctx): state %v, holding cause %v", s2.State(), context.Cause(h2.Context()))
	}
	waitFor(t, 10*time.Second, "the second session's node to go", func() bool { return len(rawChildren(t, admin, path)) == 0 })
	if err := s2.Close(); err != nil {
		t.Fatalf("Close after CloseContext = %v", err)
	}
}

// stuckConn is a connection whose writes wait until release is closed,
// once armed: go-zookeeper's close request is never sent and its teardown
// hangs, as on a network that lets nothing through.
type stuckConn struct {
	net.Conn
	armed   *atomic.Bool
	release <-chan struct{}
}

func (c stuckConn) Write(b []byte) (int, error) {
	if c.armed.Load() {
		<-c.release
	}
	return c.Conn.Write(b)
}

// TestSessionCloseBounded: Close waits at most the session timeout asked
// for at Connect: when go-zookeeper's teardown hangs, Close returns an
// error matching context.DeadlineExceeded about then, with the session
// already closed; the teardown finishes in the background once it can.
func TestSessionCloseBounded(t *testing.T) {
	e := ensemble(t)
	const timeout = 2 * time.Second
	var armed atomic.Bool
	release := make(chan struct{})
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	dial := func(network, addr string, d time.Duration) (net.Conn, error) {
		c, err := net.DialTimeout(network, addr, d)
		if err != nil {
			return nil, err
		}
		return stuckConn{Conn: c, armed: &armed, release: release}, nil
	}
	s := connect(t, e.Addrs(), recipes.WithSessionTimeout(timeout), recipes.WithDialer(dial))
	armed.Store(true)
	start := time.Now()
	err := s.Close()
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) || took < timeout || took > timeout+5*time.Second {
		t.Fatalf("Close = %v after %v, want context.DeadlineExceeded after about %v", err, took, timeout)
	}
	if s.State() != recipes.StateClosed {
		t.Fatalf("state after a bounded Close: %v", s.State())
	}
	close(release)
	released = true
	if err := s.CloseContext(context.Background()); err != nil {
		t.Fatalf("CloseContext after the teardown was let go = %v", err)
	}
}
