package queue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// quiet is how long a consumer tries to claim when nothing should be
// claimable: a bound on waiting for something that must not happen (the
// fault it would follow has already healed when it starts).
const quiet = 5 * time.Second

// three are the consumers of the claim-safety tests: A through its own
// link (the one faults hit) and a counter of its requests, B and C
// directly, and an observer session.
type three struct {
	link       *testenv.Link
	sa         *recipes.Session
	counter    *zkcount.Counter
	qa, qb, qc *queue.Queue
	obs        *recipes.Session
	path       string
}

func newThree(t *testing.T, e *testenv.Ensemble) *three {
	t.Helper()
	link, err := e.NewLink("consumer-a")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = link.Close() })
	path := testPath(t)
	sa, counter := testutil.CountedSession(t, link.Addrs())
	return &three{
		link: link, sa: sa, counter: counter, path: path,
		qa:  newQueue(t, sa, path),
		qb:  newQueue(t, connect(t, e.Addrs()), path),
		qc:  newQueue(t, connect(t, e.Addrs()), path),
		obs: connect(t, e.Addrs()),
	}
}

// afterB checks what follows once B holds the item and A is back: C must
// not claim the item while B's claim lives, B's Ack must remove it (nil),
// and no Ack may say ErrClaimLost for an item that will never be delivered
// again.
func (c *three) afterB(t *testing.T, ctx context.Context, cb *queue.Claim) {
	t.Helper()
	cctx, cancel := context.WithTimeout(ctx, quiet)
	defer cancel()
	cc, err := c.qc.Claim(cctx)
	switch {
	case err == nil:
		if cb.Context().Err() == nil {
			t.Errorf("C claimed %s while B's claim on it is live: two consumers hold one item", cc.Item().Name)
		}
	case !errors.Is(err, context.DeadlineExceeded):
		t.Fatalf("C's Claim: %v", err)
	}
	if err := cb.Ack(ctx); err != nil {
		t.Errorf("B's Ack: %v, want nil", err)
	}
	if cc != nil {
		err := cc.Ack(ctx)
		n, lerr := c.qb.Len(ctx)
		if lerr != nil {
			t.Fatal(lerr)
		}
		if errors.Is(err, queue.ErrClaimLost) && n == 0 {
			t.Errorf("C's Ack: %v, but the item is gone and will never be delivered again", err)
		}
	}
	if n, err := c.qb.Len(ctx); err != nil || n != 0 {
		t.Errorf("Len at the end = %d, %v", n, err)
	}
	if got := children(t, c.obs, c.path+"/taken"); len(got) != 0 {
		t.Errorf("claim nodes left: %v", got)
	}
}

// TestReleaseLostReplyKeepsOthersClaim: A's Release deletes its claim node
// but the reply is lost (half-open link); B claims the item, by then A's
// claim's Context must be done (Release cancels it first); when A's
// session reconnects, A must not delete B's claim node (the claim path is
// the same for every claimant), so C cannot claim the item while B works on
// it, and B's Ack succeeds.
func TestReleaseLostReplyKeepsOthersClaim(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	c := newThree(t, e)
	if _, err := c.qa.Put(ctx, []byte("x")); err != nil {
		t.Fatal(err)
	}
	ca, err := c.qa.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sid := c.sa.ID()
	if err := c.link.HalfOpen(); err != nil {
		t.Fatal(err)
	}
	released := make(chan error, 1)
	go func() { released <- ca.Release(ctx) }()
	waitFor(t, 30*time.Second, "A's claim node deleted", func() bool {
		return len(children(t, c.obs, c.path+"/taken")) == 0
	})
	cb, err := c.qb.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Claim.Release: "Context is cancelled (recipes.ErrReleased) first, then
	// our claim node is deleted"; so no two live claims on one item.
	if err := ca.Context().Err(); err == nil {
		t.Errorf("B claimed %s while A's releasing claim's Context was still live", cb.Item().Name)
	} else if cause := context.Cause(ca.Context()); !errors.Is(cause, recipes.ErrReleased) {
		t.Errorf("A's claim ended with %v, want recipes.ErrReleased", cause)
	}
	if err := <-released; err != nil {
		t.Errorf("A's Release with its reply lost: %v, want nil", err)
	}
	if err := c.link.Heal(); err != nil {
		t.Fatal(err)
	}
	if err := c.link.Cut(); err != nil {
		t.Fatal(err)
	}
	if err := c.link.Restore(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "A reconnected", func() bool {
		st := c.sa.State()
		return st == recipes.StateReconnected || st == recipes.StateConnected || st == recipes.StateLost
	})
	if c.sa.ID() != sid {
		t.Fatalf("A's session changed (0x%x -> 0x%x): the scenario needs it to survive", sid, c.sa.ID())
	}
	c.afterB(t, ctx, cb)
}

// TestCancelledAmbiguousClaimKeepsOthersClaim: A's claim create is applied
// but its reply is lost, and A's ctx is cancelled while it is disconnected;
// A's session then expires (its claim node goes with it) and B claims the
// item. When A comes back under a new session, it must not delete B's claim
// node.
func TestCancelledAmbiguousClaimKeepsOthersClaim(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	c := newThree(t, e)
	if _, err := c.qb.PutAll(ctx, [][]byte{[]byte("first"), []byte("x")}); err != nil {
		t.Fatal(err)
	}
	// A claims and acks the first item, so that it has "x" in its cached
	// listing and its next Claim begins with the create.
	first, err := c.qa.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	sid := c.sa.ID()
	if err := c.link.HalfOpen(); err != nil {
		t.Fatal(err)
	}
	actx, acancel := context.WithCancel(ctx)
	defer acancel()
	claimed := make(chan error, 1)
	go func() {
		cl, err := c.qa.Claim(actx)
		if err == nil {
			err = errors.New("claimed " + cl.Item().Name)
		}
		claimed <- err
	}()
	waitFor(t, 30*time.Second, "A's claim node created", func() bool {
		return len(children(t, c.obs, c.path+"/taken")) == 1
	})
	waitFor(t, 30*time.Second, "A suspended", func() bool { return c.sa.State() != recipes.StateConnected })
	acancel()
	if err := <-claimed; !errors.Is(err, context.Canceled) {
		t.Fatalf("A's Claim with a cancelled ctx: %v, want context.Canceled", err)
	}
	// A stays away until its session expires; B is woken by the loss of
	// A's claim node.
	if err := c.link.Cut(); err != nil {
		t.Fatal(err)
	}
	cb, err := c.qb.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.link.Heal(); err != nil {
		t.Fatal(err)
	}
	if err := c.link.Restore(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "A under a new session", func() bool {
		id := c.sa.ID()
		return id != 0 && id != sid && c.sa.State() == recipes.StateConnected
	})
	c.afterB(t, ctx, cb)
}

// TestClaimNodeDeletedOrReplaced: a claim whose node is deleted, or
// deleted and created again by another session, has its Context cancelled
// with ErrClaimLost (and recipes.ErrNodeDeleted); its Ack then removes
// nothing and says ErrClaimLost, and the other session's claim node stays.
func TestClaimNodeDeletedOrReplaced(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	for _, replace := range []bool{false, true} {
		t.Run(map[bool]string{false: "deleted", true: "replaced"}[replace], func(t *testing.T) {
			path := testPath(t)
			q := newQueue(t, connect(t, e.Addrs()), path)
			other := connect(t, e.Addrs())
			if _, err := q.Put(ctx, []byte("x")); err != nil {
				t.Fatal(err)
			}
			c, err := q.Claim(ctx)
			if err != nil {
				t.Fatal(err)
			}
			cpath := path + "/taken/" + c.Item().Name
			if err := other.Conn().Delete(cpath, -1); err != nil {
				t.Fatal(err)
			}
			if replace {
				if _, err := other.Conn().Create(cpath, nil, zk.FlagEphemeral, testutil.ACL()); err != nil {
					t.Fatal(err)
				}
			}
			select {
			case <-c.Context().Done():
			case <-ctx.Done():
				t.Fatal("the claim's context was not cancelled when its node was deleted")
			}
			if err := context.Cause(c.Context()); !errors.Is(err, queue.ErrClaimLost) || !errors.Is(err, recipes.ErrNodeDeleted) {
				t.Errorf("cause %v, want ErrClaimLost and recipes.ErrNodeDeleted", err)
			}
			if err := c.Ack(ctx); !errors.Is(err, queue.ErrClaimLost) {
				t.Errorf("Ack: %v, want ErrClaimLost", err)
			}
			ipath := path + "/" + c.Item().Name
			if ok, _, err := other.Conn().Exists(ipath); err != nil || !ok {
				t.Errorf("item %s exists = %v, %v after the lost claim's Ack; want it still queued", ipath, ok, err)
			}
			ok, _, err := other.Conn().Exists(cpath)
			if err != nil || ok != replace {
				t.Errorf("the other session's claim node exists = %v, %v; want %v", ok, err, replace)
			}
			// Leave the path empty for another run (-count).
			for _, p := range []string{cpath, ipath} {
				if err := other.Conn().Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestCancelledAmbiguousClaimCleanedUp: A's claim create is applied but its
// reply is lost and A's ctx is cancelled while it is disconnected; A's
// session survives. When A reconnects, it reads the claim node, sees its own
// session as the owner and deletes it, so B can claim the item.
func TestCancelledAmbiguousClaimCleanedUp(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	c := newThree(t, e)
	if _, err := c.qb.PutAll(ctx, [][]byte{[]byte("first"), []byte("x")}); err != nil {
		t.Fatal(err)
	}
	first, err := c.qa.Claim(ctx) // leaves "x" in A's cached listing
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	sid := c.sa.ID()
	if err := c.link.HalfOpen(); err != nil {
		t.Fatal(err)
	}
	actx, acancel := context.WithCancel(ctx)
	defer acancel()
	claimed := make(chan error, 1)
	go func() {
		cl, err := c.qa.Claim(actx)
		if err == nil {
			err = errors.New("claimed " + cl.Item().Name)
		}
		claimed <- err
	}()
	waitFor(t, 30*time.Second, "A's claim node created", func() bool {
		return len(children(t, c.obs, c.path+"/taken")) == 1
	})
	waitFor(t, 30*time.Second, "A suspended", func() bool { return c.sa.State() != recipes.StateConnected })
	acancel()
	if err := <-claimed; !errors.Is(err, context.Canceled) {
		t.Fatalf("A's Claim with a cancelled ctx: %v, want context.Canceled", err)
	}
	for _, f := range []func(...int) error{c.link.Heal, c.link.Cut, c.link.Restore} {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 30*time.Second, "A's abandoned claim node deleted", func() bool {
		return len(children(t, c.obs, c.path+"/taken")) == 0
	})
	if c.sa.ID() != sid {
		t.Fatalf("A's session changed (0x%x -> 0x%x): the scenario needs it to survive", sid, c.sa.ID())
	}
	cb, err := c.qb.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := cb.Ack(ctx); err != nil {
		t.Errorf("B's Ack: %v", err)
	}
}

// TestAckLostReplyOutcome: A's Ack multi is applied but its reply is lost,
// and A's ctx ends while it is disconnected: Ack says ErrUncertain. Called
// again once A is back under the same session, Ack learns that its multi
// removed the item and returns nil (not ErrClaimLost: the item will never
// be delivered again), and a Release instead says it was acked; if A's
// session expired meanwhile it cannot know who removed the item and says
// ErrUncertain again.
func TestAckLostReplyOutcome(t *testing.T) {
	e := ensemble(t)
	for _, mode := range []string{"reconnected", "expired", "reconnected-release"} {
		expire, release := mode == "expired", mode == "reconnected-release"
		t.Run(mode, func(t *testing.T) {
			ctx := ctxT(t, 2*time.Minute)
			c := newThree(t, e)
			if _, err := c.qb.Put(ctx, []byte("x")); err != nil {
				t.Fatal(err)
			}
			ca, err := c.qa.Claim(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ipath := c.path + "/" + ca.Item().Name
			sid := c.sa.ID()
			if err := c.link.HalfOpen(); err != nil {
				t.Fatal(err)
			}
			actx, acancel := context.WithCancel(ctx)
			defer acancel()
			acked := make(chan error, 1)
			go func() { acked <- ca.Ack(actx) }()
			waitFor(t, 30*time.Second, "the item deleted", func() bool {
				ok, _, err := c.obs.Conn().Exists(ipath)
				return err == nil && !ok
			})
			waitFor(t, 30*time.Second, "A suspended", func() bool { return c.sa.State() != recipes.StateConnected })
			acancel()
			if err := <-acked; !errors.Is(err, queue.ErrUncertain) {
				t.Fatalf("Ack with its reply lost and ctx cancelled: %v, want ErrUncertain", err)
			}
			if expire {
				if err := c.link.ExpireSession(ctx, sid); err != nil {
					t.Fatal(err)
				}
			} else {
				for _, f := range []func(...int) error{c.link.Heal, c.link.Cut, c.link.Restore} {
					if err := f(); err != nil {
						t.Fatal(err)
					}
				}
			}
			waitFor(t, 30*time.Second, "A connected again", func() bool {
				st := c.sa.State()
				return st == recipes.StateConnected || st == recipes.StateReconnected
			})
			if changed := c.sa.ID() != sid; changed != expire {
				t.Fatalf("A's session changed = %v, the scenario needs %v", changed, expire)
			}
			if release {
				// Release learns first that the Ack removed the item.
				if err := ca.Release(ctx); !errors.Is(err, recipes.ErrReleased) || errors.Is(err, queue.ErrClaimLost) {
					t.Errorf("Release after the uncertain Ack: %v, want recipes.ErrReleased (already acked)", err)
				}
			}
			err = ca.Ack(ctx)
			switch {
			case expire && !errors.Is(err, queue.ErrUncertain):
				t.Errorf("Ack after the session expired, item gone: %v, want ErrUncertain", err)
			case !expire && err != nil:
				t.Errorf("Ack again under the same session: %v, want nil (our multi removed the item)", err)
			}
			if n, err := c.qb.Len(ctx); err != nil || n != 0 {
				t.Errorf("Len = %d, %v", n, err)
			}
		})
	}
}

// TestReleaseAfterUncertainAckNotApplied: A's Ack multi is lost on the way
// (blackholed link) and A's ctx ends: Ack says ErrUncertain. Once A is back
// under the same session, Release learns that the multi was not applied
// (A's claim node is still A's), deletes the claim and says that the claim
// had ended (suspended) before it, so the item is delivered again.
//
// The link is cut as soon as the multi has left A (its counter saw it), not
// when A's own read timeout notices the blackhole: that comes two thirds of
// a session timeout after A last heard the server, which left a loaded
// machine too little of the session to reconnect in (CI saw A's session
// expire).
func TestReleaseAfterUncertainAckNotApplied(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	c := newThree(t, e)
	if _, err := c.qb.Put(ctx, []byte("x")); err != nil {
		t.Fatal(err)
	}
	ca, err := c.qa.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sid := c.sa.ID()
	if err := c.link.Blackhole(); err != nil {
		t.Fatal(err)
	}
	multis := c.counter.Snapshot().Req(zkcount.OpMulti)
	actx, acancel := context.WithCancel(ctx)
	defer acancel()
	acked := make(chan error, 1)
	go func() { acked <- ca.Ack(actx) }()
	waitFor(t, 30*time.Second, "A's Ack multi sent into the blackhole", func() bool {
		return c.counter.Snapshot().Req(zkcount.OpMulti) > multis
	})
	if err := c.link.Cut(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "A suspended", func() bool { return c.sa.State() != recipes.StateConnected })
	acancel()
	if err := <-acked; !errors.Is(err, queue.ErrUncertain) {
		t.Fatalf("Ack blackholed with ctx cancelled: %v, want ErrUncertain", err)
	}
	for _, f := range []func(...int) error{c.link.Heal, c.link.Restore} {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 30*time.Second, "A connected again", func() bool {
		st := c.sa.State()
		return st == recipes.StateConnected || st == recipes.StateReconnected
	})
	if c.sa.ID() != sid {
		t.Fatalf("A's session changed (0x%x -> 0x%x): the scenario needs it to survive", sid, c.sa.ID())
	}
	// The claim's Context ended at the suspension: Release says so (as
	// every Release of a holding lost before it), and gives the item back.
	if err := ca.Release(ctx); !errors.Is(err, recipes.ErrReleased) || !errors.Is(err, recipes.ErrSuspended) || errors.Is(err, queue.ErrClaimLost) {
		t.Fatalf("Release after an Ack that was not applied: %v, want recipes.ErrReleased and recipes.ErrSuspended", err)
	}
	cb, err := c.qb.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := cb.Ack(ctx); err != nil {
		t.Errorf("B's Ack: %v", err)
	}
	if n, err := c.qb.Len(ctx); err != nil || n != 0 {
		t.Errorf("Len = %d, %v", n, err)
	}
}
