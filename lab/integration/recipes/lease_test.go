package recipes_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// pingFrame is a ping as go-zookeeper writes it: length 8, xid -2, op 11.
var pingFrame = []byte{0, 0, 0, 8, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 11}

// pingClock records when a session writes its pings.
type pingClock struct {
	mu    sync.Mutex
	times []time.Time
}

// wrap records the pings written on c, which must carry ZooKeeper's
// frames in plaintext (testutil.ConnectWrapped puts it above TLS).
func (p *pingClock) wrap(c net.Conn) net.Conn { return &pingConn{Conn: c, p: p} }

// after returns the first ping written after t, if any.
func (p *pingClock) after(t time.Time) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, x := range p.times {
		if x.After(t) {
			return x, true
		}
	}
	return time.Time{}, false
}

type pingConn struct {
	net.Conn
	p *pingClock
}

func (c *pingConn) Write(b []byte) (int, error) {
	if bytes.Equal(b, pingFrame) {
		c.p.mu.Lock()
		c.p.times = append(c.p.times, time.Now())
		c.p.mu.Unlock()
	}
	return c.Conn.Write(b)
}

// TestLeaseWorstCase forces the worst case for the holder's failure
// detection: the last frame it receives is a watch event that arrives just
// before its next ping, so its last send the server heard is a ping a third
// of a session timeout older; then the link is cut both ways. The holder's
// Context must be done strictly before a second client acquires, by at
// least half the lease margin, on this process's monotonic clock.
// go-zookeeper alone declares the connection dead 2/3 of a timeout after
// the event, about when the server expires the session: no margin (and
// with StepDownOnLost the holder learns only once the link heals).
func TestLeaseWorstCase(t *testing.T) {
	for _, policy := range []recipes.LossPolicy{recipes.StepDownOnSuspend, recipes.StepDownOnLost} {
		t.Run(policy.String(), func(t *testing.T) {
			e := ensemble(t)
			for i := 1; i <= aimAttempts; i++ {
				missed := leaseWorstCase(t, e, policy, i)
				if missed == "" {
					return
				}
				t.Logf("attempt %d of %d: %s", i, aimAttempts, missed)
			}
			t.Fatalf("no cut of %d landed where it was aimed: not exercised", aimAttempts)
		})
	}
}

// leaseWorstCase is one trial; it returns why the cut missed its aim (the
// watch event was not the last frame the holder received), "" when it
// landed. A missed trial leaves its sessions to the test's cleanup and
// its path to the next attempt's, which is a path of its own.
func leaseWorstCase(t *testing.T, e *testenv.Ensemble, policy recipes.LossPolicy, attempt int) (missed string) {
	link, err := e.NewLink(fmt.Sprintf("lease-%s-%d", policy, attempt))
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	const margin = time.Second
	pings := &pingClock{}
	holder := testutil.ConnectWrapped(t, link.Addrs(), pings.wrap, recipes.WithLossPolicy(policy),
		recipes.WithLeaseMargin(margin))
	timeout := holder.NegotiatedTimeout()
	if timeout != testutil.SessionTimeout {
		t.Fatalf("negotiated timeout %v, want %v", timeout, testutil.SessionTimeout)
	}
	other := connect(t, e.Addrs())
	ctx := testutil.Ctx(t, 2*time.Minute)
	path := fmt.Sprintf("%s-%d", testPath(t), attempt)

	h, err := recipes.Acquire(ctx, holder, recipes.Spec{Path: path, Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	hctx := h.Context() // arms the holding's data watch now, not during the fault
	stepped := make(chan time.Time, 1)
	go func() {
		<-hctx.Done()
		stepped <- time.Now()
	}()
	sub := holder.Subscribe()
	defer sub.Close()

	trigger := path + "-trigger"
	_, _, events, err := holder.Conn().ExistsW(trigger)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		h   *recipes.Holding
		at  time.Time
		err error
	}
	acquired := make(chan result, 1)
	go func() {
		h2, err := recipes.Acquire(ctx, other, recipes.Spec{Path: path})
		acquired <- result{h2, time.Now(), err}
	}()
	waitFor(t, 10*time.Second, "the other client to wait", func() bool { return len(rawChildren(t, other, path)) == 2 })

	// Place the event just before the holder's next ping: go-zookeeper
	// pings every third of the timeout.
	start := time.Now()
	var ping time.Time
	waitFor(t, 10*time.Second, "a ping", func() (ok bool) { ping, ok = pings.after(start); return ok })
	fire := ping.Add(timeout/3 - 150*time.Millisecond)
	time.Sleep(time.Until(fire)) // positions the fault in the ping cycle; it waits for no condition
	if err := link.CutAfterNextFrame(); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Conn().Create(trigger, nil, zk.FlagEphemeral, testutil.ACL()); err != nil {
		t.Fatal(err)
	}
	var eventAt time.Time
	select {
	case ev := <-events:
		eventAt = time.Now()
		if ev.Type != zk.EventNodeCreated {
			t.Fatalf("holder got %v, want node created", ev.Type)
		}
	case <-time.After(10 * time.Second):
		// Another frame passed first and the cut dropped the event: the
		// trial did not build the worst case.
		return "the watch event did not reach the holder (another frame came first)"
	}
	t.Logf("last ping the server heard %v before the watch event", eventAt.Sub(ping).Round(time.Millisecond))

	var steppedAt time.Time
	var other2 result
	select {
	case steppedAt = <-stepped:
		select {
		case other2 = <-acquired:
		case <-ctx.Done():
			t.Fatal("the other client never acquired")
		}
	case other2 = <-acquired:
		t.Errorf("the other client acquired %v after the event while the holder still held", other2.at.Sub(eventAt).Round(time.Millisecond))
	case <-ctx.Done():
		t.Fatal("neither the holder stepped down nor the other client acquired")
	}
	if other2.err != nil {
		t.Fatalf("other acquire: %v", other2.err)
	}
	defer other2.h.Release(context.Background())
	if !steppedAt.IsZero() {
		measured := other2.at.Sub(steppedAt)
		t.Logf("holder stepped down (%v) %v after the event (%v after the ping); the other client acquired %v later: margin %v (lease margin %v)", context.Cause(hctx),
			steppedAt.Sub(eventAt).Round(time.Millisecond), steppedAt.Sub(ping).Round(time.Millisecond),
			measured.Round(time.Millisecond), measured.Round(time.Millisecond), margin)
		if measured < margin/2 {
			t.Errorf("measured margin %v, want at least %v", measured.Round(time.Millisecond), margin/2)
		}
		if cause := context.Cause(hctx); !errors.Is(cause, recipes.ErrLeaseExpired) || !errors.Is(cause, recipes.ErrSuspended) {
			t.Errorf("holder's cause %v, want ErrLeaseExpired (an ErrSuspended)", cause)
		}
	}
	// While the link is still cut, the Session itself reports the session
	// lost after a whole timeout without reply.
	lctx, cancel := context.WithTimeout(ctx, 3*timeout)
	defer cancel()
	lost := false
	for !lost {
		c, err := sub.Next(lctx)
		if err != nil {
			t.Fatalf("no lost state while cut: %v", err)
		}
		lost = c.State == recipes.StateLost
	}

	if err := link.Heal(); err != nil {
		t.Fatal(err)
	}
	if err := link.Cut(); err != nil {
		t.Fatal(err)
	}
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the holder's new session", func() bool {
		return holder.State() == recipes.StateConnected && holder.ID() != h.SessionID()
	})
	return ""
}

// TestLeaseLostThenReconnected: when replies stop but the server still
// hears the client (a half-open link), the Session reports the session
// lost after a whole timeout, as the server might have expired it; when
// the link heals the same session comes back as StateReconnected. The
// holding stays cancelled (ErrLeaseExpired), and releasing it deletes its
// node, which outlived the lease with the session.
func TestLeaseLostThenReconnected(t *testing.T) {
	e := ensemble(t)
	link, err := e.NewLink("lease-back")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	// A longer timeout than the other tests: the server must still have
	// the session when the test heals the link after the lease's Lost.
	s := connect(t, link.Addrs(), recipes.WithSessionTimeout(6*time.Second))
	observer := connect(t, e.Addrs())
	ctx := testutil.Ctx(t, 2*time.Minute)
	path := testPath(t)
	h, err := recipes.Acquire(ctx, s, recipes.Spec{Path: path, Policy: recipes.StepDownOnLost})
	if err != nil {
		t.Fatal(err)
	}
	hctx := h.Context()
	sid := s.ID()
	sub := s.Subscribe()
	defer sub.Close()
	if c, err := sub.Next(ctx); err != nil || c.State != recipes.StateConnected {
		t.Fatalf("first state %v, %v", c.State, err)
	}

	if err := link.HalfOpen(); err != nil {
		t.Fatal(err)
	}
	var seen []recipes.State
	for {
		c, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("after %v: %v", seen, err)
		}
		seen = append(seen, c.State)
		if c.State == recipes.StateLost {
			if c.SessionID != sid {
				t.Fatalf("lost 0x%x, want 0x%x", c.SessionID, sid)
			}
			break
		}
	}
	if cause := context.Cause(hctx); !errors.Is(cause, recipes.ErrLeaseExpired) {
		t.Fatalf("holding's cause at Lost: %v", cause)
	}
	if err := link.Heal(); err != nil {
		t.Fatal(err)
	}
	if err := link.Cut(); err != nil { // drop the connection stuck in its handshake
		t.Fatal(err)
	}
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	c, err := sub.Next(ctx)
	for err == nil && c.State == recipes.StateSuspended {
		c, err = sub.Next(ctx)
	}
	if err != nil || c.State != recipes.StateReconnected || c.SessionID != sid {
		t.Fatalf("after %v: %v 0x%x, %v; want reconnected 0x%x", seen, c.State, c.SessionID, err, sid)
	}
	if s.ID() != sid || hctx.Err() == nil {
		t.Fatalf("ID 0x%x (want 0x%x), holding done: %v", s.ID(), sid, hctx.Err())
	}
	if len(rawChildren(t, observer, path)) != 1 {
		t.Fatal("the holding's node did not outlive the lease")
	}
	// Lost (its lease ran out) before Release: Release says so, and still
	// deletes the node, which outlived the lease.
	if err := h.Release(ctx); !errors.Is(err, recipes.ErrReleased) || !errors.Is(err, recipes.ErrLeaseExpired) {
		t.Fatalf("Release after the lease ran out = %v, want recipes.ErrReleased and recipes.ErrLeaseExpired", err)
	}
	waitFor(t, 10*time.Second, "the released node to go", func() bool { return len(rawChildren(t, observer, path)) == 0 })
	t.Logf("states %v, then reconnected", seen)
}

// TestLeaseCostsNoRequest: an idle holding's lease is renewed by pings
// alone (the Session's own, every LeaseBudget().Ping, which go-zookeeper's,
// every third of the timeout, replace when the budget has none): over two
// timeouts the wire shows no request but pings, no more pings than one per
// interval, and the holding lives on.
func TestLeaseCostsNoRequest(t *testing.T) {
	e := ensemble(t)
	s, counter := testutil.CountedSession(t, e.Addrs())
	ctx := testutil.Ctx(t, time.Minute)
	h, err := recipes.Acquire(ctx, s, recipes.Spec{Path: testPath(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release(context.Background())
	hctx := h.Context()
	waitFor(t, 10*time.Second, "the holding's watch", func() bool { return counter.Snapshot().Req(zkcount.OpGetData) == 1 })
	before, began := counter.Snapshot(), time.Now()
	timeout := s.NegotiatedTimeout()
	waitFor(t, 4*timeout, "the lease to be renewed past two timeouts", func() bool {
		return s.LeaseDeadline().After(began.Add(2 * timeout))
	})
	d, took := counter.Snapshot().Sub(before), time.Since(began)
	if len(d.Requests) != 0 || d.Connects != 0 {
		t.Errorf("the lease sent %v and %d connects", d.Requests, d.Connects)
	}
	b, err := s.LeaseBudget()
	if err != nil {
		t.Fatal(err)
	}
	most := int64(took/(timeout/3)) + 1 // go-zookeeper's
	if b.Ping > 0 {
		most += int64(took/b.Ping) + 1 // the Session's, when nothing else was written for b.Ping
	}
	if d.Pings > most {
		t.Errorf("%d pings in %v, at most %d expected (the Session's every %v, go-zookeeper's every %v)", d.Pings, took.Round(time.Millisecond), most, b.Ping, timeout/3)
	}
	if hctx.Err() != nil {
		t.Fatalf("holding ended: %v", context.Cause(hctx))
	}
	t.Logf("%v: requests %v, %d pings; lease deadline %v ahead", took.Round(time.Millisecond), d.Requests, d.Pings,
		time.Until(s.LeaseDeadline()).Round(time.Millisecond))
}
