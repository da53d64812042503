package recipes_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// The lease's P and R terms at their boundaries (docs/design.md, "The
// lease"), in quorumlag_test.go's topology: the holder's session on a
// follower F, the waiter's on the leader, F cut from both other servers
// (or, for R, only what F sends them).
// The margin is tiny here (termMargin) so that a term removed from the
// bound (hooks.SetLeaseDrop) is not hidden by it.

// termMargin is the lease margin of the holders of these tests.
const termMargin = 10 * time.Millisecond

// activeEvery is the interval of an active holder's reads.
const activeEvery = 5 * time.Millisecond

// readUntilEnd has holder read path every activeEvery, from a goroutine
// counted in wg, until hctx is done or stop is closed: a trial that
// returns early must not wait for a holding that nothing ends any more.
func readUntilEnd(wg *sync.WaitGroup, holder *recipes.Session, path string, hctx context.Context, stop <-chan struct{}) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(activeEvery)
		defer tk.Stop()
		for hctx.Err() == nil {
			_, _, _ = holder.Conn().Exists(path)
			select {
			case <-tk.C:
			case <-hctx.Done():
			case <-stop:
				return
			}
		}
	}()
}

// termSetup is one boundary trial's settings.
type termSetup struct {
	timeout             time.Duration // the holder's session timeout
	margin              time.Duration // the holder's lease margin
	dropQ, dropP, dropR bool          // leave Q, P, R out of the holder's lag (hooks.SetLeaseDrop)
	// aim: the holder sends nothing but its pings before the cut, and the
	// cut lands just before its next ping, so that its last request F
	// reported to the leader is almost P old; from the cut on it reads
	// every activeEvery, so its last answered request is almost as late as
	// F's last answer.
	aim bool
	// lead is how long before the holder's next ping the cut's command
	// begins (aim); 0 is defaultLead. aimedTrial lengthens it after a miss.
	lead time.Duration
	// active: the holder reads every activeEvery from before the cut on.
	active bool
	// dir is the direction of F's quorum traffic the cut drops (Both by
	// default).
	dir testenv.Direction
	// outboundFirst > 0: F's outbound quorum traffic is cut first and the
	// inbound only this long after (outboundFirst is how long after the
	// first cut's command began the second one begins).
	outboundFirst time.Duration
}

// termTrial is one trial's outcome (lagTrial's, plus what aimed it).
type termTrial struct {
	lagTrial
	sinceRequest time.Duration // from the holder's last request before the cut to the cut's command's start (aim)
	cutTook      time.Duration // the cut's command's duration
	renewedAt    time.Duration // send time of the holder's last answered request, from the cut
	missed       string        // why an aimed cut missed its aim (the trial measured nothing), or ""
}

func (r termTrial) String() string {
	return fmt.Sprintf("%v; last request %v before the cut, cut took %v, last answered request sent %v after the cut",
		r.lagTrial, r.sinceRequest.Round(time.Millisecond), r.cutTook.Round(time.Millisecond), r.renewedAt.Round(time.Millisecond))
}

// lastBefore returns the last ping written before t, if any.
func (p *pingClock) lastBefore(t time.Time) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var last time.Time
	for _, x := range p.times {
		if x.Before(t) {
			last = x
		}
	}
	return last, !last.IsZero()
}

// termTrialRun runs one trial of c: it places the holder (StepDownOnLost)
// on a follower and the waiter on the leader, cuts the follower as c says,
// and measures.
func termTrialRun(t *testing.T, e *testenv.Ensemble, c termSetup) termTrial {
	t.Helper()
	ctx := testutil.Ctx(t, 2*time.Minute)
	p := placeOnFollower(t, ctx, e, "term")
	defer p.link.Close()
	hs, holderAddr, waiterAddr := p.hs, p.holderAddr, p.waiterAddr
	pings := &pingClock{}
	var restore func()
	if c.dropQ || c.dropP || c.dropR {
		restore = hooks.SetLeaseDrop(c.dropQ, c.dropP, c.dropR)
	}
	holder := testutil.ConnectWrapped(t, []string{holderAddr}, pings.wrap, recipes.WithLossPolicy(recipes.StepDownOnLost),
		recipes.WithSessionTimeout(c.timeout), recipes.WithLeaseMargin(c.margin), recipes.WithEnsembleTiming(e.Timing()))
	if restore != nil {
		restore() // the holder's budget is set; the waiter's is the library's
	}
	defer testutil.CloseSession(t, holder)
	waiter := testutil.Connect(t, []string{waiterAddr}, recipes.WithEnsembleTiming(e.Timing()))
	defer testutil.CloseSession(t, waiter)
	b := p.confirm(t, holder, waiter, c.timeout)
	tick, syncLimit := e.Timing()
	s, q, rt := tick*time.Duration(syncLimit), tick/2, recipes.DefaultQuorumRetransmit
	want := s + q + rt + b.Ping
	if c.dropQ {
		want -= q
	}
	if c.dropP {
		want -= b.Ping
	}
	if c.dropR {
		want -= rt
	}
	if b.Lag != want || b.Hold != c.timeout-b.Lag-b.Margin {
		t.Fatalf("holder's budget %+v, want lag %v (S %v, Q %v, R %v, P %v, dropped Q %v, P %v, R %v)", b, want, s, q, rt, b.Ping, c.dropQ, c.dropP, c.dropR)
	}

	hf := startHandoff(t, ctx, holder, waiter, recipes.StepDownOnLost)
	hctx := hf.held

	// An active holder reads its node every activeEvery until the holding
	// ends (a read the follower cannot answer any more just fails).
	// The reads also stop when the trial returns, however it returns: a
	// trial that ends before the holding does (a missed aim, a t.Fatal)
	// must not wait for a holding that nothing ends any more.
	var wg sync.WaitGroup
	defer wg.Wait()
	stopReads := make(chan struct{})
	defer close(stopReads)
	startReads := func() { readUntilEnd(&wg, holder, hf.path, hctx, stopReads) }
	if c.active {
		startReads()
	}

	var r termTrial
	if c.aim {
		// The holder is idle: it writes a ping every P. Cut just before
		// the next one, leaving the time a docker exec takes.
		from := time.Now()
		var ping time.Time
		waitFor(t, 10*time.Second, "a ping", func() (ok bool) { ping, ok = pings.after(from); return ok })
		lead := c.lead
		if lead == 0 {
			lead = defaultLead
		}
		time.Sleep(time.Until(ping.Add(b.Ping - lead))) // positions the cut in the ping cycle; it waits for no condition
	}
	cutStart := time.Now()
	dir := c.dir
	if c.outboundFirst > 0 {
		dir = testenv.Outbound
	}
	if err := e.IsolateOneWay(ctx, hs, dir); err != nil {
		t.Fatal(err)
	}
	cutEnd := time.Now()
	defer func() {
		rctx := testutil.Ctx(t, 2*time.Minute)
		if err := e.Rejoin(rctx, hs); err != nil {
			t.Error(err)
		}
		if err := e.WaitQuorum(rctx); err != nil {
			t.Error(err)
		}
	}()
	r.cutTook = cutEnd.Sub(cutStart)
	if c.aim {
		startReads()
		last, _ := pings.lastBefore(cutEnd)
		r.sinceRequest = cutStart.Sub(last)
		if last.After(cutStart) || r.sinceRequest < b.Ping/2 {
			// The deferred calls heal the cut and close both sessions;
			// aimedTrial tries again.
			r.missed = fmt.Sprintf("the cut (%v to %v after the holder's last ping before it) missed its aim",
				cutStart.Sub(last).Round(time.Millisecond), cutEnd.Sub(last).Round(time.Millisecond))
			return r
		}
	}
	if c.outboundFirst > 0 {
		time.Sleep(time.Until(cutStart.Add(c.outboundFirst))) // positions the second cut; it waits for no condition
		if err := e.IsolateOneWay(ctx, hs, testenv.Inbound); err != nil {
			t.Fatal(err)
		}
		if late := time.Since(cutStart); late > s-q {
			t.Fatalf("the inbound cut ended %v after the outbound one began, later than S - Q = %v (the leader may have closed the link): not exercised",
				late.Round(time.Millisecond), s-q)
		}
	}

	r.margin = b.Margin
	acquiredAt, steppedAt, release := hf.await(t, ctx)
	defer release()
	r.acquired, r.stepped = acquiredAt.Sub(cutStart), steppedAt.Sub(cutStart)
	r.cause = context.Cause(hctx)
	// The lease ended Hold after the send time of the last answered
	// request, unless something else ended the holding first.
	r.renewedAt = holder.LeaseDeadline().Add(-b.Hold).Sub(cutStart)
	return r
}

// aimAttempts is how many times aimedTrial aims a cut before it gives up.
const aimAttempts = 3

// The cut's command (a docker exec of iptables) begins defaultLead before
// the holder's next ping; after a miss the next attempt leaves twice what
// the missed command took, at most maxLead, which keeps the holder's last
// ping before the cut more than P/2 older than it (P is 1318 ms in
// pingTermSetup) as termTrialRun requires.
const (
	defaultLead = 150 * time.Millisecond
	maxLead     = 500 * time.Millisecond
)

// aimedTrial runs the aimed trial c until a cut lands where it was aimed,
// at most aimAttempts times. A cut that missed (the docker exec that
// applies it took longer than the lead it was given, as on a machine busy
// with other test packages: 210 to 300 ms against a 150 ms lead in a race
// pass) measured nothing about the term, so it is not a failed trial but
// none at all; the next attempt gives the command the time the missed one
// took (see maxLead). If every attempt misses, the test fails as not
// exercised.
func aimedTrial(t *testing.T, e *testenv.Ensemble, c termSetup) termTrial {
	t.Helper()
	for i := 1; i <= aimAttempts; i++ {
		r := termTrialRun(t, e, c)
		if r.missed == "" {
			return r
		}
		t.Logf("attempt %d of %d: %s (the cut's command took %v)", i, aimAttempts, r.missed, r.cutTook.Round(time.Millisecond))
		c.lead = min(max(defaultLead, 2*r.cutTook), maxLead)
	}
	t.Fatalf("no cut of %d landed where it was aimed: not exercised", aimAttempts)
	return termTrial{}
}

// pingTermSetup is the P boundary's trial: a 7 s timeout and a 10 ms
// margin give P = 1118 ms (S 1 s, Q 100 ms, R 300 ms), so the holder's
// last request before the cut, aimed just before its next ping, is about
// 1 s older than the cut, a delay the leader's ping replies cannot hide,
// nor R, which a cut both ways leaves unused. P stays below S + R (Stall
// 182 ms): at 8 s, P = 1318 ms, Stall is negative, every reply is a stall
// and the tap's stall memo holds the renewals of the holder's reads for S
// at a time, which hides the overlap P's absence causes.
func pingTermSetup(dropP bool) termSetup {
	return termSetup{timeout: 7 * time.Second, margin: termMargin, dropP: dropP, aim: true}
}

// TestLeasePingTermInside: the holder idle (its own pings, every P, are
// all it sends) until a cut aimed just before its next ping, then reading
// every 5 ms until F gives up: its last request F reported to the leader
// is almost P older than the cut, its last answered one almost S newer.
// With the whole bound (Λ = S + Q + R + P) and a 10 ms margin, it steps down
// before the waiter acquires, by at least half the margin, in every
// trial.
func TestLeasePingTermInside(t *testing.T) {
	testutil.RequireHooks(t)
	e := quorum.Start(t)
	testutil.NoLeakedGoroutines(t, testutil.Running("recipes"))
	for i := range leaseTrials(t) {
		r := aimedTrial(t, e, pingTermSetup(false))
		t.Logf("trial %d: %v", i, r)
		if r.gap() < r.margin/2 {
			t.Errorf("trial %d: %v: want a gap of at least %v", i, r, r.margin/2)
		}
	}
}

// TestLeasePingTermOutside: TestLeasePingTermInside's trial with P left
// out of the holder's lag (hooks.SetLeaseDrop): the waiter acquires while
// the holder's Context is still live, in every trial. P is needed.
func TestLeasePingTermOutside(t *testing.T) {
	testutil.RequireHooks(t)
	e := quorum.Start(t)
	testutil.NoLeakedGoroutines(t, testutil.Running("recipes"))
	for i := range leaseTrials(t) {
		r := aimedTrial(t, e, pingTermSetup(true))
		t.Logf("trial %d: %v", i, r)
		if r.gap() >= 0 {
			t.Errorf("trial %d: %v: want the waiter to acquire while the holder still held (P is needed)", i, r)
		}
	}
}

// TestLeaseIdleAndActiveHolder: in the quorum-lag topology, at the
// harness's settings (3 s timeout, the default 300 ms margin), a holder
// that only pings and one that reads every 5 ms both step down before the
// waiter acquires, by at least half the margin.
func TestLeaseIdleAndActiveHolder(t *testing.T) {
	e := quorum.Start(t)
	testutil.NoLeakedGoroutines(t, testutil.Running("recipes"))
	for _, active := range []bool{false, true} {
		name := "idle"
		if active {
			name = "active"
		}
		t.Run(name, func(t *testing.T) {
			for i := range leaseTrials(t) {
				r := termTrialRun(t, e, termSetup{timeout: testutil.SessionTimeout, margin: -1, active: active})
				t.Logf("trial %d: %v", i, r)
				if r.gap() < r.margin/2 {
					t.Errorf("trial %d: %v: want a gap of at least %v", i, r, r.margin/2)
				}
			}
		})
	}
}

// fastTick is a three-server ensemble with a 50 ms tick (S = 250 ms, Q =
// 25 ms), for R's boundary: the leader's expiry buckets round a session's
// expiry up by up to a tick, which at the 200 ms default hides R's effect
// in some trials (measured 2026-11-28: with R dropped, overlap in 4 of 6
// trials, gaps of 52 and 67 ms in the other two), while the TCP
// retransmission timeout R stands for does not shrink with the tick.
var fastTick = testutil.NewShared(testenv.Config{Servers: 3, TickTime: 50 * time.Millisecond})

// retransmitTermSetup is the R boundary's trial, on fastTick: only what F
// sends its peers is cut, so the leader's last read from F is at the cut
// while its pings go on reaching F until its TCP retransmission timer
// (about 200 ms) stops them; the holder reads every activeEvery, so its
// last answered request is about F's last answer. A 900 ms timeout and a
// 10 ms margin give P = 63 ms (S 250 ms, Q 25 ms, R 300 ms): with R
// dropped the bound allows Q + P + m = 98 ms past the leader's last read
// of F where F reads the leader for about Q + RTO = 225 ms, more than the
// up to 50 ms by which the leader's tick rounds the expiry up.
func retransmitTermSetup(dropR bool) termSetup {
	return termSetup{timeout: 900 * time.Millisecond, margin: termMargin, dropR: dropR, active: true, dir: testenv.Outbound}
}

// TestLeaseRetransmitTermInside: F's outbound quorum traffic alone is cut
// while the holder reads every 5 ms (on fastTick). F hears the leader's
// pings up to Q + RTO after the leader last heard F, and answers that much
// longer than S;
// with the whole bound (Λ = S + Q + R + P, R the default 300 ms) and a
// 10 ms margin, the holder steps down before the waiter acquires, by at
// least half the margin, in every trial.
func TestLeaseRetransmitTermInside(t *testing.T) {
	testutil.RequireHooks(t)
	e := fastTick.Start(t)
	testutil.NoLeakedGoroutines(t, testutil.Running("recipes"))
	for i := range leaseTrials(t) {
		r := termTrialRun(t, e, retransmitTermSetup(false))
		t.Logf("trial %d: %v", i, r)
		if r.gap() < r.margin/2 {
			t.Errorf("trial %d: %v: want a gap of at least %v", i, r, r.margin/2)
		}
	}
}

// TestLeaseRetransmitTermOutside: TestLeaseRetransmitTermInside's trial
// with R left out of the holder's lag (hooks.SetLeaseDrop): the waiter
// acquires while the holder's Context is still live, in every trial that
// exercised R. R is needed. A trial exercised R when the holder's last
// answered request was sent more than S + Q + P + m plus a tick (the
// expiry rounding) after the cut's command ended: F answered past what
// the bound without R allows. Once in 8 trials (2026-11-28, with -race)
// F's answers stopped 281 ms after the cut, about S after it, as if the
// leader's pings had stopped at the cut; such a trial is logged and left
// out and another run in its place (up to three times as many trials as
// wanted), and the test fails as not exercised when none exercised R.
func TestLeaseRetransmitTermOutside(t *testing.T) {
	testutil.RequireHooks(t)
	e := fastTick.Start(t)
	testutil.NoLeakedGoroutines(t, testutil.Running("recipes"))
	c := retransmitTermSetup(true)
	tick, syncLimit := e.Timing()
	b, err := recipes.NewLeaseBudget(c.timeout, c.margin, tick, syncLimit, recipes.DefaultQuorumRetransmit)
	if err != nil {
		t.Fatal(err)
	}
	allowed := tick*time.Duration(syncLimit) + tick/2 + b.Ping + b.Margin // the bound without R
	exercised, want := 0, leaseTrials(t)
	for i := 0; exercised < want && i < 3*want; i++ {
		r := termTrialRun(t, e, c)
		past := r.renewedAt - r.cutTook - allowed
		t.Logf("trial %d: %v; answered %v past S + Q + P + m", i, r, past.Round(time.Millisecond))
		if past <= tick {
			t.Logf("trial %d: F answered only %v past S + Q + P + m after the cut, not more than a tick (%v): R not exercised", i, past.Round(time.Millisecond), tick)
			continue
		}
		exercised++
		if r.gap() >= 0 {
			t.Errorf("trial %d: %v: want the waiter to acquire while the holder still held (R is needed)", i, r)
		}
	}
	if exercised == 0 {
		t.Fatal("no trial exercised R: not exercised")
	}
}

// placement is a boundary trial's topology: the holder's session on
// follower hs, the waiter's on the leader ws, each through its own
// address of link.
type placement struct {
	link                   *testenv.Link
	hs, ws                 int
	holderAddr, waiterAddr string
}

// placeOnFollower waits for a quorum and returns a new link (named prefix
// and the time; the caller closes it) with the holder's address on the
// follower after the leader and the waiter's on the leader.
func placeOnFollower(t *testing.T, ctx context.Context, e *testenv.Ensemble, prefix string) placement {
	t.Helper()
	if err := e.WaitQuorum(ctx); err != nil {
		t.Fatal(err)
	}
	leader, err := e.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := placement{hs: (leader + 1) % e.Servers(), ws: leader}
	if p.link, err = e.NewLink(fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())); err != nil {
		t.Fatal(err)
	}
	p.holderAddr, p.waiterAddr = p.link.Addrs()[p.hs], p.link.Addrs()[p.ws]
	return p
}

// confirm fails t as not exercised unless holder and waiter are on the
// servers p placed them on, and unless the holder negotiated timeout; it
// returns the holder's lease budget.
func (p placement) confirm(t *testing.T, holder, waiter *recipes.Session, timeout time.Duration) recipes.LeaseBudget {
	t.Helper()
	if got := holder.Conn().Server(); got != p.holderAddr {
		t.Fatalf("holder's session is on %s, want %s (server %d): not exercised", got, p.holderAddr, p.hs)
	}
	if got := waiter.Conn().Server(); got != p.waiterAddr {
		t.Fatalf("waiter's session is on %s, want %s (server %d): not exercised", got, p.waiterAddr, p.ws)
	}
	if got := holder.NegotiatedTimeout(); got != timeout {
		t.Fatalf("negotiated timeout %v, want %v", got, timeout)
	}
	b, err := holder.LeaseBudget()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
