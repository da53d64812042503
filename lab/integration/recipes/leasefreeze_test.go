package recipes_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// The lease's server-freeze term (docs/design.md, "Server freezes"): the
// holder's session on a follower F, the waiter's on the leader, as in
// leaseterms_test.go, but F is frozen (Ensemble.Pause, a cgroup freeze)
// for D and then thawed, instead of cut off. A frozen F runs no timer
// and answers nothing; the leader closes their connection S after F's
// last message (LearnerHandler's read timeout). On thaw F reads the
// leader's last pings, fails to answer them (a broken pipe: server logs,
// 2026-11-28) and shuts down within about 15 ms, while its client
// threads race it with the holder's requests queued during the freeze.
// An answer would renew the holder's lease from a send time inside the
// freeze (or just after it), though the leader last heard of the session
// before it; the Session caps each renewal at Stall after the oldest
// request then unanswered (LeaseBudget.Stall). TestLeaseFreezeTermInside
// shows the holding ends in time with the cap, TestLeaseFreezeTermOutside
// that without it the holder overlaps the waiter.
//
// The holder may not reconnect once its connection to F ends (its dialer
// closes every connection after the first): F follows the leader again
// about 15 ms after the thaw, go-zookeeper retries a second after its
// first failed attempt, and a reconnection would revalidate the session,
// so that no trial would end in an expiry. The overlap below therefore
// takes a second fault: the holder cut off from every server from the
// thaw until the leader expires the session.

// freezeSetup is one freeze trial's settings.
type freezeSetup struct {
	timeout time.Duration // the holder's session timeout
	margin  time.Duration // the holder's lease margin (-1: the default)
	freeze  time.Duration // D: from the end of the Pause call to the start of the Resume call
	// cut: once the holder's late read returns after the thaw, the
	// holder's link to F is cut (for freezes F survives as a follower:
	// without the cut the session would go on).
	cut bool
}

// lateReadLead is how long before the Resume call the holder sends its
// late read, so that one request is sent at the very end of the freeze.
const lateReadLead = 50 * time.Millisecond

// freezeTrial is one trial's outcome; every moment is from the end of
// the Pause call (f).
type freezeTrial struct {
	lagTrial
	pauseTook, resumeAt, resumeTook time.Duration
	hold                            time.Duration // the holder's LeaseBudget.Hold
	// staleBound is S + R (LeaseBudget.Ping + Stall): how far past the
	// start of the freeze the frozen follower's answers may renew the
	// lease (docs/design.md, "Server freezes").
	staleBound time.Duration
	// stale is how many replies that arrived after the Resume call began
	// renewed the lease to a send time later than f; staleSent is the
	// latest such send time, staleAt when its reply arrived.
	stale              int
	staleSent, staleAt time.Duration
	lateRead           error         // the late read's outcome
	connEnd            time.Duration // when the holder's connection to F ended, by F or the cut (0: not by the trial's end)
}

func (r freezeTrial) String() string {
	conn := "lasted"
	if r.connEnd > 0 {
		conn = "ended " + r.connEnd.Round(time.Millisecond).String()
	}
	return fmt.Sprintf("pause took %v, resumed at %v (took %v); %d stale renewals, latest sent %v, arrived %v; late read: %v; connection %v; "+
		"holder stepped down %v (%v), waiter acquired %v: gap %v (margin %v, hold %v)",
		r.pauseTook.Round(time.Millisecond), r.resumeAt.Round(time.Millisecond), r.resumeTook.Round(time.Millisecond),
		r.stale, r.staleSent.Round(time.Millisecond), r.staleAt.Round(time.Millisecond), r.lateRead, conn,
		r.stepped.Round(time.Millisecond), r.cause, r.acquired.Round(time.Millisecond), r.gap().Round(time.Millisecond), r.margin, r.hold)
}

// leaseLog records the holder's lease renewals: when each reply arrived
// and the send time it renewed the lease to.
type leaseLog struct {
	recipes.BaseObserver
	hold time.Duration // set before the trial; the renewal's send time is Deadline - hold
	mu   sync.Mutex
	at   []time.Time
	sent []time.Time
}

func (l *leaseLog) ObserveLease(e recipes.LeaseEvent) {
	if e.Expired {
		return
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.hold == 0 {
		return
	}
	l.at = append(l.at, now)
	l.sent = append(l.sent, e.Deadline.Add(-l.hold))
}

// stale returns how many renewals arrived after from and renewed the
// lease to a send time after f, and the latest such send time and its
// arrival.
func (l *leaseLog) stale(f, from time.Time) (n int, sent, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, a := range l.at {
		if a.After(from) && l.sent[i].After(f) {
			n++
			if l.sent[i].After(sent) {
				sent, at = l.sent[i], a
			}
		}
	}
	return n, sent, at
}

// oneConn lets a session open one connection: every later one is closed
// at once. It records when the first one's reads ended.
type oneConn struct {
	dialed atomic.Int32
	allow  atomic.Bool // let later connections through (for the session's Close)
	mu     sync.Mutex
	ended  time.Time
}

func (o *oneConn) wrap(c net.Conn) net.Conn {
	if o.dialed.Add(1) > 1 && !o.allow.Load() {
		_ = c.Close()
		return c
	}
	return &endConn{Conn: c, o: o}
}

func (o *oneConn) endedAt() time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.ended
}

type endConn struct {
	net.Conn
	o *oneConn
}

func (c *endConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil {
		c.o.mu.Lock()
		if c.o.ended.IsZero() {
			c.o.ended = time.Now()
		}
		c.o.mu.Unlock()
	}
	return n, err
}

// freezeTrialRun runs one trial of c: it places the holder (StepDownOnLost,
// reading every activeEvery) on a follower F and the waiter on the leader,
// freezes F for c.freeze, sends one read lateReadLead before the thaw,
// thaws F, and measures.
func freezeTrialRun(t *testing.T, e *testenv.Ensemble, c freezeSetup) freezeTrial {
	t.Helper()
	ctx := testutil.Ctx(t, 2*time.Minute)
	p := placeOnFollower(t, ctx, e, "freeze")
	defer p.link.Close()
	hs, link, holderAddr, waiterAddr := p.hs, p.link, p.holderAddr, p.waiterAddr
	leases := &leaseLog{}
	conns := &oneConn{}
	opts := []recipes.Option{recipes.WithLossPolicy(recipes.StepDownOnLost), recipes.WithSessionTimeout(c.timeout),
		recipes.WithEnsembleTiming(e.Timing()), recipes.WithObserver(leases)}
	if c.margin >= 0 {
		opts = append(opts, recipes.WithLeaseMargin(c.margin))
	}
	holder := testutil.ConnectWrapped(t, []string{holderAddr}, conns.wrap, opts...)
	defer testutil.CloseSession(t, holder)
	defer conns.allow.Store(true) // before the Close above
	waiter := testutil.Connect(t, []string{waiterAddr}, recipes.WithEnsembleTiming(e.Timing()))
	defer testutil.CloseSession(t, waiter)
	b := p.confirm(t, holder, waiter, c.timeout)
	leases.mu.Lock()
	leases.hold = b.Hold
	leases.mu.Unlock()

	hf := startHandoff(t, ctx, holder, waiter, recipes.StepDownOnLost)
	hctx := hf.held

	// The holder reads every activeEvery until the holding ends (a read
	// blocks while F is frozen), as in termTrialRun.
	var wg sync.WaitGroup
	defer wg.Wait()
	stopReads := make(chan struct{})
	defer close(stopReads)
	readUntilEnd(&wg, holder, hf.path, hctx, stopReads)

	pauseStart := time.Now()
	if err := e.Pause(ctx, hs); err != nil {
		t.Fatal(err)
	}
	f := time.Now()
	resumed := false
	defer func() {
		if !resumed {
			if err := e.Resume(testutil.Ctx(t, time.Minute), hs); err != nil {
				t.Error(err)
			}
		}
		rctx := testutil.Ctx(t, 2*time.Minute)
		if err := e.WaitQuorum(rctx); err != nil {
			t.Error(err)
		}
	}()
	lateDone := make(chan error, 1)
	time.Sleep(time.Until(f.Add(c.freeze - lateReadLead))) // positions the late read; it waits for no condition
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _, err := holder.Conn().Exists(hf.path)
		lateDone <- err
	}()
	time.Sleep(time.Until(f.Add(c.freeze))) // the freeze's length; it waits for no condition
	resumeStart := time.Now()
	if err := e.Resume(ctx, hs); err != nil {
		t.Fatal(err)
	}
	resumed = true
	resumeEnd := time.Now()

	var r freezeTrial
	r.pauseTook, r.resumeAt, r.resumeTook = f.Sub(pauseStart), resumeStart.Sub(f), resumeEnd.Sub(resumeStart)
	r.margin, r.hold, r.staleBound = b.Margin, b.Hold, b.Ping+b.Stall
	select {
	case r.lateRead = <-lateDone:
	case <-ctx.Done():
		t.Fatal("the late read never returned")
	}
	if c.cut {
		if err := link.Cut(hs); err != nil {
			t.Fatal(err)
		}
	}
	acquiredAt, steppedAt, release := hf.await(t, ctx)
	defer release()
	r.acquired, r.stepped = acquiredAt.Sub(f), steppedAt.Sub(f)
	r.cause = context.Cause(hctx)
	var sent, at time.Time
	r.stale, sent, at = leases.stale(f, resumeStart)
	if r.stale > 0 {
		r.staleSent, r.staleAt = sent.Sub(f), at.Sub(f)
	}
	if end := conns.endedAt(); !end.IsZero() {
		r.connEnd = end.Sub(f)
	}
	return r
}

// freezeTermTimeout and freezeTermMargin are the freeze tests' timing where the holding
// outlives the freeze: an 8 s timeout and a 300 ms margin give P = 1260 ms
// and Hold = 5040 ms (S 1 s, Q 100 ms, R 300 ms), so a freeze of up to
// about 5 s ends before the holder's lease does, and go-zookeeper keeps
// the connection through it (it gives up after 2T/3 = 5.3 s without a
// read).
const (
	freezeTermTimeout = 8 * time.Second
	freezeTermMargin  = 300 * time.Millisecond
)

// freezeFull skips t unless ZKRECIPES_LEASE_FREEZE is set: the freeze
// trials at an 8 s timeout take up to a few minutes, and run in the full
// tier (scripts/test.sh -full), not in the default one.
func freezeFull(t *testing.T) {
	t.Helper()
	if os.Getenv("ZKRECIPES_LEASE_FREEZE") == "" {
		t.Skip("trials at an 8 s timeout: the full tier runs them (ZKRECIPES_LEASE_FREEZE=1)")
	}
}

// freezeLong is the freeze beyond S + R + m that the holding outlives:
// D = 4.5 s at T 8 s (Hold 5.04 s, go-zookeeper's read timeout 5.3 s).
var freezeLong = freezeSetup{timeout: freezeTermTimeout, margin: freezeTermMargin, freeze: 4500 * time.Millisecond}

// freezeOutsideAttempts bounds the trials of the long freeze: a multiple
// of the trials it wants exercised.
const freezeOutsideAttempts = 8

// longFreezeTrials runs trials of freezeLong until want of them were
// exercised (the holder's late read, sent 50 ms before the thaw, more
// than S + R + P + m after the freeze began, was answered by the thawed
// follower) or freezeOutsideAttempts times as many ran, calls check on
// each exercised one, and skips t when none was: the race between the
// thawed follower's client threads and its shutdown is ZooKeeper's, and
// the test cannot steer it (2026-11-28, before the Stall cap: replies
// from the thawed follower in 8 of 26 trials, to requests sent past the
// bound in 4).
func longFreezeTrials(t *testing.T, e *testenv.Ensemble, check func(i int, r freezeTrial)) {
	want := leaseTrials(t)
	exercised, attempts := 0, 0
	for ; exercised < want && attempts < freezeOutsideAttempts*want; attempts++ {
		r := freezeTrialRun(t, e, freezeLong)
		if r.lateRead != nil {
			t.Logf("trial %d: %v: the late read was not answered: not exercised", attempts, r)
			continue
		}
		exercised++
		check(attempts, r)
	}
	if exercised == 0 {
		t.Skipf("the thawed follower answered no late read in %d trials: its shutdown won every race; not exercised", attempts)
	}
	t.Logf("%d of %d trials exercised the freeze", exercised, attempts)
}

// TestLeaseFreezeTermInside: the holder (reading every 5 ms, one read
// 50 ms before the thaw) steps down before the waiter acquires, by at
// least half the margin, in every trial:
//   - follower stays (the testenv defaults: T 3 s, m 300 ms; D 800 ms <
//     S): F keeps its leader, answers the holder's reads queued during the
//     freeze as soon as it thaws (4 or 5 replies to requests sent in the
//     freeze in each of 8 trials, 2026-11-28), and reports them to the
//     leader; the holder's link is then cut, so that the session expires.
//     A trial without such a reply did not exercise the thaw (it happens
//     on a loaded machine: F's connection closed before its reply); it
//     still must not overlap, and another trial runs in its place, up to
//     three times as many trials as wanted: the test fails as not
//     exercised when none had a reply.
//   - follower drops out (T 8 s, m 300 ms; S < D = 1.1 s <= S + R; full
//     tier): on thaw F finds the leader gone and shuts down; what it
//     answers first is covered by the terms (2026-11-28: 1 of 8 trials had
//     such a reply, to the read sent 50 ms before the thaw, and a gap of
//     2.06 s; the others 3.1 s).
//   - beyond S + R, capped (T 8 s, D 4.5 s; full tier): the thawed F
//     answers requests sent past what the terms cover, but each renews the
//     lease from no later than Stall after the oldest request then
//     unanswered (LeaseBudget.Stall, docs/design.md "Server freezes"),
//     sent at the start of the freeze, and no reply renews it from later
//     than S + R after the freeze began. Trials where F answered the late
//     read count; at least one must.
func TestLeaseFreezeTermInside(t *testing.T) {
	e := quorum.Start(t)
	testutil.NoLeakedGoroutines(t, testutil.Running("recipes"))
	for _, c := range []struct {
		name  string
		full  bool
		setup freezeSetup
	}{
		{"follower stays", false, freezeSetup{timeout: testutil.SessionTimeout, margin: -1, freeze: 800 * time.Millisecond, cut: true}},
		{"follower drops out", true, freezeSetup{timeout: freezeTermTimeout, margin: freezeTermMargin, freeze: 1100 * time.Millisecond}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.full {
				freezeFull(t)
			}
			exercised, want := 0, leaseTrials(t)
			for i := 0; exercised < want; i++ {
				r := freezeTrialRun(t, e, c.setup)
				t.Logf("trial %d: %v", i, r)
				if r.gap() < r.margin/2 {
					t.Errorf("trial %d: %v: want a gap of at least %v", i, r, r.margin/2)
				}
				if c.setup.cut && r.stale == 0 {
					// the thaw's replies were not exercised: another trial
					// in its place, up to three times as many as wanted
					if i+1 >= 3*want {
						t.Fatalf("trial %d: %v: no reply to a request sent during the freeze in %d trials: not exercised", i, r, i+1)
					}
					t.Logf("trial %d: no reply to a request sent during the freeze: not exercised, another trial", i)
					continue
				}
				exercised++
			}
		})
	}
	t.Run("beyond S + R, capped", func(t *testing.T) {
		freezeFull(t)
		longFreezeTrials(t, e, func(i int, r freezeTrial) {
			t.Logf("trial %d: %v", i, r)
			if r.gap() < r.margin/2 {
				t.Errorf("trial %d: %v: want a gap of at least %v (the Stall cap)", i, r, r.margin/2)
			}
			// The renewal the gap rests on, in every exercised trial: the
			// full tier at 90eac1d saw the lease renewed from 4.491 s (the
			// read sent late in the freeze, plus Stall), an overlap of 1.4 s.
			if r.stale > 0 && r.staleSent > r.staleBound {
				t.Errorf("trial %d: %v: the thawed follower's answers renewed the lease from %v after the freeze began, past S + R = %v",
					i, r, r.staleSent, r.staleBound)
			}
		})
	})
}

// TestLeaseFreezeTermOutside: the long freeze of TestLeaseFreezeTermInside
// with the Stall cap removed (hooks.SetLeaseStallDrop; full tier). F
// frozen for D = 4.5 s, longer than S + R + m but shorter than the
// holder's lease (T 8 s, m 300 ms: Hold 5.04 s) and than go-zookeeper's
// 2T/3 read timeout. On thaw F's leader has long closed their connection
// (LearnerHandler's read timeout, S after the freeze began); F's follower
// thread learns it on its first write (a broken pipe) and shuts down
// within milliseconds, while its client threads race it. When they win,
// F answers the holder's requests sent at the end of the freeze, the lease
// runs a whole Hold from there, and the leader, which last heard of the
// session before the freeze, expires it and the waiter acquires while
// the holder's Context is still live: every exercised trial overlaps
// (2026-11-28, on the code before the cap: 4 of 4 trials with a reply past
// the bound overlapped, by 0.79 to 1.38 s). The cap is needed.
//
// It takes a second fault as well: the holder cannot reach any server from
// the thaw until the expiry (its dialer refuses to reconnect).
func TestLeaseFreezeTermOutside(t *testing.T) {
	freezeFull(t)
	testutil.RequireHooks(t)
	e := quorum.Start(t)
	testutil.NoLeakedGoroutines(t, testutil.Running("recipes"))
	restore := hooks.SetLeaseStallDrop(true)
	defer restore()
	longFreezeTrials(t, e, func(i int, r freezeTrial) {
		t.Logf("trial %d: %v", i, r)
		if r.gap() >= 0 {
			t.Errorf("trial %d: %v: want the waiter to acquire while the holder still held (without the Stall cap)", i, r)
		}
	})
}
