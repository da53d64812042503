package recipes_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// The lease's lag term (docs/design.md, "The lease"): a follower cut off
// from its leader goes on answering its clients for up to syncLimit x
// tickTime, while the leader, which alone expires sessions, hears of them
// no more. These tests build that topology on a three-server ensemble: the
// holder's session on a follower F, the waiter's on the leader L, then F is
// cut from both other servers (its client port stays reachable, and the
// holder's link to it stays up). The holder's Context must end before the
// waiter acquires, by at least half the margin.

// quorum is the package's three-server ensemble, for the tests that need a
// leader and followers; started on first use.
var quorum = testutil.NewShared(testenv.Config{Servers: 3})

// leaseTrials is how many trials each boundary test runs: 1 by default
// (each term's inside and outside tested once), ZKRECIPES_LEASE_TRIALS in
// the full tier (scripts/test.sh -full runs every lease test again with 2,
// the freeze terms' long cases included).
func leaseTrials(t *testing.T) int {
	if v := os.Getenv("ZKRECIPES_LEASE_TRIALS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("ZKRECIPES_LEASE_TRIALS=%q: want a positive number", v)
		}
		return n
	}
	return 1
}

// lagTrial is one trial's outcome: when the holder's Context ended and the
// waiter acquired, measured from the isolation, and why the holding ended.
type lagTrial struct {
	stepped, acquired time.Duration
	cause             error
	margin            time.Duration
}

// gap is how long before the waiter acquired the holder stepped down
// (negative: both held at once).
func (r lagTrial) gap() time.Duration { return r.acquired - r.stepped }

func (r lagTrial) String() string {
	return fmt.Sprintf("holder stepped down %v after the isolation (%v), waiter acquired %v after: gap %v (margin %v)",
		r.stepped.Round(time.Millisecond), r.cause, r.acquired.Round(time.Millisecond), r.gap().Round(time.Millisecond), r.margin)
}

// isolatedHolderTrial places the holder on a server and the waiter on
// another, as holderOnLeader says, isolates the holder's server, and
// measures. holderOpts are the holder's session options after the
// harness's (they may override the ensemble timing).
func isolatedHolderTrial(t *testing.T, e *testenv.Ensemble, holderOnLeader bool, policy recipes.LossPolicy, holderOpts ...recipes.Option) lagTrial {
	t.Helper()
	return isolatedHolderTrialDir(t, e, holderOnLeader, testenv.Both, policy, holderOpts...)
}

// isolatedHolderTrialDir is isolatedHolderTrial with the isolation cutting
// only the direction dir of the holder's server's quorum traffic.
func isolatedHolderTrialDir(t *testing.T, e *testenv.Ensemble, holderOnLeader bool, dir testenv.Direction, policy recipes.LossPolicy, holderOpts ...recipes.Option) lagTrial {
	t.Helper()
	ctx := testutil.Ctx(t, 2*time.Minute)
	if err := e.WaitQuorum(ctx); err != nil {
		t.Fatal(err)
	}
	leader, err := e.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	follower := (leader + 1) % e.Servers()
	hs, ws := follower, leader
	if holderOnLeader {
		hs, ws = leader, follower
	}
	link, err := e.NewLink(fmt.Sprintf("lag-%d", time.Now().UnixNano()))
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	holderAddr, waiterAddr := link.Addrs()[hs], link.Addrs()[ws]
	holder := testutil.Connect(t, []string{holderAddr}, append([]recipes.Option{recipes.WithLossPolicy(policy)}, holderOpts...)...)
	defer testutil.CloseSession(t, holder)
	waiter := testutil.Connect(t, []string{waiterAddr})
	defer testutil.CloseSession(t, waiter)
	if got := holder.Conn().Server(); got != holderAddr {
		t.Fatalf("holder's session is on %s, want %s (server %d): not exercised", got, holderAddr, hs)
	}
	if got := waiter.Conn().Server(); got != waiterAddr {
		t.Fatalf("waiter's session is on %s, want %s (server %d): not exercised", got, waiterAddr, ws)
	}
	b, err := holder.LeaseBudget()
	if err != nil {
		t.Fatal(err)
	}

	hf := startHandoff(t, ctx, holder, waiter, policy)

	isolated := time.Now()
	if err := e.IsolateOneWay(ctx, hs, dir); err != nil {
		t.Fatal(err)
	}
	defer func() {
		rctx := testutil.Ctx(t, 2*time.Minute)
		if err := e.Rejoin(rctx, hs); err != nil {
			t.Error(err)
		}
		if err := e.WaitQuorum(rctx); err != nil {
			t.Error(err)
		}
	}()
	var r lagTrial
	r.margin = b.Margin
	acquiredAt, steppedAt, release := hf.await(t, ctx)
	defer release()
	r.acquired, r.stepped = acquiredAt.Sub(isolated), steppedAt.Sub(isolated)
	r.cause = context.Cause(hf.held)
	return r
}

// handoff is a holding on a fresh path and a waiter queued behind it, each
// reporting the moment it ends or acquires.
type handoff struct {
	path     string          // the holding's node
	held     context.Context // the holding's Context
	stepped  chan time.Time
	acquired chan acquisition
}

type acquisition struct {
	h   *recipes.Holding
	at  time.Time
	err error
}

// startHandoff makes holder acquire a fresh path under policy and waiter
// queue behind it, and returns once the waiter's node is listed.
func startHandoff(t *testing.T, ctx context.Context, holder, waiter *recipes.Session, policy recipes.LossPolicy) *handoff {
	t.Helper()
	path := testPath(t)
	h, err := recipes.Acquire(ctx, holder, recipes.Spec{Path: path, Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	hf := &handoff{path: h.Path(), held: h.Context(), stepped: make(chan time.Time, 1), acquired: make(chan acquisition, 1)}
	go func() {
		<-hf.held.Done()
		hf.stepped <- time.Now()
	}()
	go func() {
		h2, err := recipes.Acquire(ctx, waiter, recipes.Spec{Path: path})
		hf.acquired <- acquisition{h2, time.Now(), err}
	}()
	waitFor(t, 10*time.Second, "the waiter to wait", func() bool { return len(rawChildren(t, waiter, path)) == 2 })
	return hf
}

// await waits for the waiter to acquire and then for the holding to end,
// and returns both moments and the waiter's release (for the caller to
// defer); it fails the test when either does not come before ctx ends.
func (hf *handoff) await(t *testing.T, ctx context.Context) (acquiredAt, steppedAt time.Time, release func()) {
	t.Helper()
	var got acquisition
	select {
	case got = <-hf.acquired:
	case <-ctx.Done():
		t.Fatal("the waiter never acquired")
	}
	if got.err != nil {
		t.Fatalf("waiter: %v", got.err)
	}
	release = func() { got.h.Release(context.Background()) }
	select {
	case steppedAt = <-hf.stepped:
	case <-ctx.Done():
		release()
		t.Fatal("the holder never stepped down")
	}
	return got.at, steppedAt, release
}

// TestLeaseQuorumLagInside: with the ensemble's real timing, under either
// loss policy, a holder on a follower cut off from the leader (and a
// holder on an isolated leader, and a follower cut one way only, in
// either direction) steps down before the waiter on the other
// side acquires, by at least half the margin, in every trial.
func TestLeaseQuorumLagInside(t *testing.T) {
	e := quorum.Start(t)
	testutil.NoLeakedGoroutines(t, testutil.Running("recipes"))
	for _, c := range []struct {
		name     string
		onLeader bool
		dir      testenv.Direction
		policy   recipes.LossPolicy
	}{
		{"holder on follower/" + recipes.StepDownOnLost.String(), false, testenv.Both, recipes.StepDownOnLost},
		{"holder on follower/" + recipes.StepDownOnSuspend.String(), false, testenv.Both, recipes.StepDownOnSuspend},
		{"holder on leader/" + recipes.StepDownOnLost.String(), true, testenv.Both, recipes.StepDownOnLost},
		{"holder on follower/inbound only/" + recipes.StepDownOnLost.String(), false, testenv.Inbound, recipes.StepDownOnLost},
		{"holder on follower/outbound only/" + recipes.StepDownOnLost.String(), false, testenv.Outbound, recipes.StepDownOnLost},
	} {
		t.Run(c.name, func(t *testing.T) {
			for i := range leaseTrials(t) {
				r := isolatedHolderTrialDir(t, e, c.onLeader, c.dir, c.policy)
				t.Logf("trial %d: %v", i, r)
				if r.gap() < r.margin/2 {
					t.Errorf("trial %d: %v: want a gap of at least %v", i, r, r.margin/2)
				}
			}
		})
	}
}

// TestLeaseQuorumLagOutside: the same topology, the holder on a follower
// under StepDownOnLost, but its Session told the server is standalone
// (syncLimit 0: no lag). Its lease then runs a whole timeout from replies
// the isolated follower gave while the leader no longer heard of them, and
// the waiter acquires while the holder's Context is still live. This is
// the overlap the lag term prevents; on the code before the lag existed
// every session behaved like this one.
func TestLeaseQuorumLagOutside(t *testing.T) {
	e := quorum.Start(t)
	testutil.NoLeakedGoroutines(t, testutil.Running("recipes"))
	tick, _ := e.Timing()
	r := isolatedHolderTrial(t, e, false, recipes.StepDownOnLost, recipes.WithEnsembleTiming(tick, 0))
	t.Logf("%v", r)
	if r.gap() >= 0 {
		t.Fatalf("%v: want the waiter to acquire while the holder still held (the lag is needed)", r)
	}
}

// TestLeaseTooShortRefusesAtOnce: on a Session whose timeout leaves no
// lease (here a margin of an hour), an acquisition fails at once with
// ErrLeaseTooShort (an ErrBadArgument) and sends nothing, where it used to
// create, find its holding already expired, and start over until its ctx
// ended (4,352 requests in 2 s).
func TestLeaseTooShortRefusesAtOnce(t *testing.T) {
	e := ensemble(t)
	s, counter := testutil.CountedSession(t, e.Addrs(), recipes.WithLeaseMargin(time.Hour))
	if _, err := s.LeaseBudget(); !errors.Is(err, recipes.ErrLeaseTooShort) {
		t.Fatalf("LeaseBudget: %v, want ErrLeaseTooShort", err)
	}
	before := counter.Snapshot()
	ctx := testutil.Ctx(t, 10*time.Second)
	m, err := lock.New(s, testPath(t)+"-lock")
	if err != nil {
		t.Fatal(err)
	}
	q, err := queue.New(s, testPath(t)+"-queue")
	if err != nil {
		t.Fatal(err)
	}
	for _, try := range []func() error{
		func() error { _, err := recipes.Acquire(ctx, s, recipes.Spec{Path: testPath(t)}); return err },
		func() error { _, err := recipes.TryAcquire(ctx, s, recipes.Spec{Path: testPath(t)}); return err },
		func() error { return m.Lock(ctx) },
		func() error { _, err := q.Claim(ctx); return err },
	} {
		if err := try(); !errors.Is(err, recipes.ErrLeaseTooShort) || !errors.Is(err, recipes.ErrBadArgument) {
			t.Fatalf("acquire: %v, want ErrLeaseTooShort and ErrBadArgument", err)
		}
	}
	if d := counter.Snapshot().Sub(before); d.Total() != 0 {
		t.Fatalf("refused acquisitions sent %v", d.Requests)
	}
}
