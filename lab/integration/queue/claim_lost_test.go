package queue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestClaimLostCreateOthersClaim: consumer A's create of a claim node is
// lost on the way to the server (the request, not only its reply), and
// while A is disconnected consumer B claims the same item. The Claim
// invariant: while a Claim's Context is not done, no other consumer holds
// a live claim on its item. When A reads the claim node back to learn
// what became of its create, it finds B's node (another session's): it
// must leave the item to B and look again, never take B's node as its own.
//
// The aim: A's cached listing already holds the item, so its claim's
// create is the first request it sends; the link is armed, on an idle
// connection, with an upstream reset that swallows that request and resets
// the connection (and every new one) until Heal. Confirmed when zkcount saw
// the create written and no claim node was there when A noticed the drop;
// otherwise the test fails as not exercised (a ping sent first).
func TestClaimLostCreateOthersClaim(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	path := testPath(t)
	link, err := e.NewLink("queue-claim-lost")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	as, counter := testutil.CountedSession(t, link.Addrs())
	qa := newQueue(t, as, path)
	bs := connect(t, e.Addrs())
	qb := newQueue(t, bs, path)
	admin := connect(t, e.Addrs())
	if _, err := qb.PutAll(ctx, [][]byte{[]byte("warm-up"), []byte("target")}); err != nil {
		t.Fatal(err)
	}
	// A lists both items and claims the first (in the secured pass this
	// also runs the claims path's squatting check, once); the second stays
	// in A's cached listing.
	warm, err := qa.Claim(ctx)
	if err != nil || string(warm.Item().Data) != "warm-up" {
		t.Fatalf("A's first Claim = %+v, %v", warm, err)
	}
	if err := warm.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	// A request was just answered: no ping is due for a third of the
	// session timeout.
	before := counter.Snapshot()
	if err := link.ResetPeer(0); err != nil {
		t.Fatal(err)
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	type claimed struct {
		c   *queue.Claim
		err error
	}
	got := make(chan claimed, 1)
	go func() {
		c, err := qa.Claim(actx)
		got <- claimed{c, err}
	}()
	waitFor(t, 10*time.Second, "A to notice the reset", func() bool {
		st := as.State()
		return st == recipes.StateSuspended || st == recipes.StateLost
	})
	creates := counter.Snapshot().Sub(before).Req(zkcount.OpCreate)
	if taken := children(t, admin, path+"/taken"); creates != 1 || len(taken) != 0 {
		t.Fatalf("not exercised: A wrote %d creates before the drop (want 1), claim nodes then %v (want none)", creates, taken)
	}
	cb, err := qb.Claim(ctx)
	if err != nil || string(cb.Item().Data) != "target" {
		t.Fatalf("B's Claim while A is cut off = %+v, %v", cb, err)
	}
	healed := counter.Snapshot()
	if err := link.Heal(); err != nil {
		t.Fatal(err)
	}
	// A reads the claim node back (1 exists), finds B's, and looks again
	// (a listing); a Claim that returns instead took B's node.
	var r claimed
	returned := false
	waitFor(t, 30*time.Second, "A to read the claim node back and look again", func() bool {
		select {
		case r = <-got:
			returned = true
			return true
		default:
		}
		d := counter.Snapshot().Sub(healed)
		return d.Req(zkcount.OpExists) >= 1 && d.Req(zkcount.OpGetChildren)+d.Req(zkcount.OpGetChildren2) >= 1
	})
	if returned && r.c != nil {
		t.Fatalf("A's Claim returned %s (claim of session 0x%x) while B (session 0x%x) holds a live claim on it: two live claims on one item",
			r.c.Item().Name, as.ID(), bs.ID())
	}
	if returned {
		t.Fatalf("A's Claim returned (%v) before its ctx was cancelled, want it waiting for an item", r.err)
	}
	cancel()
	select {
	case r = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("A's Claim did not return within 30 s of its ctx's end")
	}
	if r.c != nil || !errors.Is(r.err, context.Canceled) {
		t.Fatalf("A's Claim after its ctx ended = %+v, %v; want ctx's error", r.c, r.err)
	}
	if err := cb.Context().Err(); err != nil {
		t.Fatalf("B's claim ended: %v", context.Cause(cb.Context()))
	}
	if err := cb.Ack(ctx); err != nil {
		t.Fatalf("B's Ack: %v", err)
	}
}
