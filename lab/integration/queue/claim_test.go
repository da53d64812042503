package queue_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
)

func TestClaimAckRelease(t *testing.T) {
	e := ensemble(t)
	s := connect(t, e.Addrs())
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	q := newQueue(t, s, path)
	if _, err := q.PutAll(ctx, [][]byte{[]byte("a"), []byte("b")}); err != nil {
		t.Fatal(err)
	}
	c1, err := q.Claim(ctx)
	if err != nil || string(c1.Item().Data) != "a" {
		t.Fatalf("Claim = %v, %v", c1, err)
	}
	// Another consumer skips the claimed item.
	q2 := newQueue(t, connect(t, e.Addrs()), path)
	c2, err := q2.Claim(ctx)
	if err != nil || string(c2.Item().Data) != "b" {
		t.Fatalf("second Claim = %+v, %v", c2.Item(), err)
	}
	if got := children(t, s, path+"/taken"); len(got) != 2 {
		t.Fatalf("claim nodes %v", got)
	}
	// Release returns "a"; the other consumer claims it (woken by the
	// release while waiting, as every item is claimed).
	got := make(chan *queue.Claim, 1)
	go func() {
		c, err := q2.Claim(ctx)
		if err != nil {
			t.Errorf("Claim after release: %v", err)
		}
		got <- c
	}()
	if err := c1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c1.Release(ctx); !errors.Is(err, queue.ErrClaimLost) {
		t.Fatalf("second Release: %v", err)
	}
	c3 := <-got
	if c3 == nil || string(c3.Item().Data) != "a" {
		t.Fatalf("Claim after release got %+v", c3)
	}
	for _, c := range []*queue.Claim{c2, c3} {
		if err := c.Context().Err(); err != nil {
			t.Fatalf("claim context done while held: %v", err)
		}
		if err := c.Ack(ctx); err != nil {
			t.Fatal(err)
		}
		if err := context.Cause(c.Context()); !errors.Is(err, recipes.ErrReleased) {
			t.Fatalf("claim context after Ack: %v", err)
		}
	}
	if err := context.Cause(c1.Context()); !errors.Is(err, recipes.ErrReleased) {
		t.Fatalf("claim context after Release: %v", err)
	}
	// Outcomes are exact: a second Ack says again that the item is gone
	// under our claim; a Release after it has nothing to give back; an Ack
	// after a Release says the item is delivered again.
	if err := c3.Ack(ctx); err != nil {
		t.Fatalf("second Ack: %v, want nil", err)
	}
	if err := c3.Release(ctx); !errors.Is(err, recipes.ErrReleased) || errors.Is(err, queue.ErrClaimLost) {
		t.Fatalf("Release after Ack: %v, want recipes.ErrReleased", err)
	}
	if err := c1.Ack(ctx); !errors.Is(err, queue.ErrClaimLost) {
		t.Fatalf("Ack after Release: %v, want ErrClaimLost", err)
	}
	if n, err := q.Len(ctx); err != nil || n != 0 {
		t.Fatalf("Len after acks = %d, %v", n, err)
	}
	if got := children(t, s, path+"/taken"); len(got) != 0 {
		t.Fatalf("claim nodes left: %v", got)
	}
}

// TestClaimSessionExpiry: 2 producers x 3 consumers x 100 items with
// claim/ack, plus a consumer whose session expires while it holds an item:
// that item is delivered to another consumer, the dead consumer's Ack fails
// with ErrClaimLost, and every item is acked exactly once.
func TestClaimSessionExpiry(t *testing.T) {
	const producers, consumers, perProducer = 2, 3, 100
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	path := testPath(t)

	// The doomed consumer claims the first item before anyone else runs.
	link, err := e.NewLink("doomed")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = link.Close() })
	ds := connect(t, link.Addrs())
	dq := newQueue(t, ds, path)
	if _, err := dq.Put(ctx, []byte("first")); err != nil {
		t.Fatal(err)
	}
	doomed, err := dq.Claim(ctx)
	if err != nil || string(doomed.Item().Data) != "first" {
		t.Fatalf("doomed Claim = %v, %v", doomed, err)
	}

	var mu sync.Mutex
	acked := make(map[string]int)
	var total atomic.Int64
	want := int64(producers*perProducer + 1)
	done, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for c := range consumers {
		q := newQueue(t, connect(t, e.Addrs()), path)
		wg.Go(func() {
			for {
				cl, err := q.Claim(done)
				if err != nil {
					if done.Err() == nil {
						t.Errorf("consumer %d: %v", c, err)
					}
					return
				}
				if err := cl.Ack(ctx); err != nil {
					t.Errorf("consumer %d: ack %s: %v", c, cl.Item().Name, err)
					continue
				}
				mu.Lock()
				acked[string(cl.Item().Data)]++
				mu.Unlock()
				if total.Add(1) == want {
					stop()
				}
			}
		})
	}
	for p := range producers {
		q := newQueue(t, connect(t, e.Addrs()), path)
		wg.Go(func() {
			for k := range perProducer {
				if _, err := q.Put(ctx, fmt.Appendf(nil, "p%d-%d", p, k)); err != nil {
					t.Errorf("producer %d: %v", p, err)
					return
				}
			}
		})
	}
	// Mid-way, the doomed consumer's session expires with the item held.
	waitFor(t, time.Minute, "half of the items acked", func() bool { return total.Load() >= want/2 })
	mu.Lock()
	early := acked["first"]
	mu.Unlock()
	if early != 0 {
		t.Fatalf("the claimed item was delivered while its claim lived")
	}
	sid := ds.ID()
	if err := link.ExpireSession(ctx, sid); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "a new session for the doomed consumer", func() bool {
		id := ds.ID()
		return id != 0 && id != sid
	})
	select {
	case <-doomed.Context().Done():
		// The blackhole suspends the connection first (default loss
		// policy), unless the loss is seen first.
		if err := context.Cause(doomed.Context()); !errors.Is(err, recipes.ErrSuspended) && !errors.Is(err, recipes.ErrSessionLost) {
			t.Errorf("doomed claim's context cause: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the doomed claim's context was never cancelled")
	}
	if err := doomed.Ack(ctx); !errors.Is(err, queue.ErrClaimLost) {
		t.Errorf("Ack after the session expired: %v, want ErrClaimLost", err)
	}
	wg.Wait()
	if len(acked) != int(want) {
		t.Errorf("%d distinct items acked, want %d", len(acked), want)
	}
	for data, n := range acked {
		if n != 1 {
			t.Errorf("item %s acked %d times", data, n)
		}
	}
	if acked["first"] != 1 {
		t.Errorf("the expired consumer's item was not delivered again")
	}
	if n, err := dq.Len(ctx); err != nil || n != 0 {
		t.Errorf("Len at the end = %d, %v", n, err)
	}
}

// TestClaimFence: a claim's fence is its claim node (czxid, session,
// version); the token grows from claim to claim of the same item; a write
// to the claim node by someone else that leaves it ours is followed (the
// fence's version moves and fenced writes go on); once the claim node is
// deleted by someone else, or the claim is acked, fenced writes are
// rejected with recipes.ErrFenced. A fenced write costs 1 multi. Bad input:
// a nil ctx is ErrBadArgument, a nil Claim ErrNilReceiver; nothing is sent.
func TestClaimFence(t *testing.T) {
	e := ensemble(t)
	s, counter := testutil.CountedSession(t, e.Addrs())
	admin := connect(t, e.Addrs())
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	q := newQueue(t, s, path)
	if _, err := q.Put(ctx, []byte("a")); err != nil {
		t.Fatal(err)
	}
	counterPath := path + "-counter"
	if _, err := admin.Conn().Create(counterPath, nil, 0, testutil.ACL()); err != nil {
		t.Fatal(err)
	}
	write := &zk.SetDataRequest{Path: counterPath, Data: []byte("x"), Version: -1}

	c1, err := q.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f1 := c1.Fence()
	ok, st, err := admin.Conn().Exists(f1.Path)
	if err != nil || !ok || st.Czxid != f1.Token || st.EphemeralOwner != f1.SessionID || f1.Path != path+"/taken/"+c1.Item().Name {
		t.Fatalf("fence %+v, claim node %v %+v %v", f1, ok, st, err)
	}
	before := counter.Snapshot()
	if _, err := c1.FencedMulti(ctx, write); err != nil {
		t.Fatalf("FencedMulti while claimed: %v", err)
	}
	testutil.WantOps(t, "Claim.FencedMulti", counter.Snapshot().Sub(before), map[zkcount.Op]int64{zkcount.OpMulti: 1})
	// A foreign write to the claim node: still ours, followed.
	if _, err := admin.Conn().Set(f1.Path, []byte("foreign"), -1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the claim to follow the write", func() bool { return c1.Fence().Version == f1.Version+1 })
	if c1.Context().Err() != nil {
		t.Fatalf("claim ended by a write that left it ours: %v", context.Cause(c1.Context()))
	}
	if _, err := c1.FencedMulti(ctx, write); err != nil {
		t.Fatalf("FencedMulti after the followed write: %v", err)
	}
	if err := c1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c1.FencedMulti(ctx, write); !errors.Is(err, recipes.ErrFenced) {
		t.Fatalf("FencedMulti after Release = %v, want ErrFenced", err)
	}

	// The same item claimed again: a larger token.
	c2, err := q.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if f2 := c2.Fence(); f2.Path != f1.Path || f2.Token <= f1.Token {
		t.Fatalf("second claim's fence %+v after %+v: want the same node, a larger token", f2, f1)
	}
	// Someone else deletes the claim node: fenced writes are rejected.
	if err := admin.Conn().Delete(c2.Fence().Path, -1); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.FencedMulti(ctx, write); !errors.Is(err, recipes.ErrFenced) {
		t.Fatalf("FencedMulti after the claim node was deleted = %v, want ErrFenced", err)
	}
	waitFor(t, 10*time.Second, "the claim to end", func() bool { return c2.Context().Err() != nil })

	c3, err := q.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c3.FencedMulti(nil, write); !errors.Is(err, recipes.ErrBadArgument) { //nolint:staticcheck // a nil ctx on purpose
		t.Fatalf("FencedMulti(nil ctx) = %v, want ErrBadArgument", err)
	}
	if err := c3.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c3.FencedMulti(ctx, write); !errors.Is(err, recipes.ErrFenced) {
		t.Fatalf("FencedMulti after Ack = %v, want ErrFenced", err)
	}
	var nilClaim *queue.Claim
	if _, err := nilClaim.FencedMulti(ctx, write); !errors.Is(err, queue.ErrNilReceiver) || nilClaim.Fence().Valid() {
		t.Fatalf("nil Claim: FencedMulti %v, fence %+v", err, nilClaim.Fence())
	}
}
