package queue_test

import (
	"errors"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/queue"
)

// TestMaxItems: a producer made WithMaxItems(3) fills the queue to 3
// items, then its Put and PutAll fail with ErrFull and add nothing; once a
// consumer took an item it puts again. Each Put costs 1 exists and 1
// create; a refused one, the exists alone.
func TestMaxItems(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	s, counter := testutil.CountedSession(t, e.Addrs())
	// The claim path outside the queue's: every child is an item.
	p := newQueue(t, s, path, queue.WithMaxItems(3), queue.WithClaimPath(path+"-taken"))
	c := newQueue(t, connect(t, e.Addrs()), path, queue.WithClaimPath(path+"-taken"))
	if _, err := p.PutAll(ctx, [][]byte{[]byte("1"), []byte("2")}); err != nil {
		t.Fatal(err)
	}
	before := counter.Snapshot()
	if _, err := p.Put(ctx, []byte("3")); err != nil {
		t.Fatal(err)
	}
	testutil.WantOps(t, "Put with room", counter.Snapshot().Sub(before),
		map[zkcount.Op]int64{zkcount.OpExists: 1, zkcount.OpCreate: 1})
	before = counter.Snapshot()
	if _, err := p.Put(ctx, []byte("4")); !errors.Is(err, queue.ErrFull) {
		t.Fatalf("Put on a full queue: %v, want ErrFull", err)
	}
	testutil.WantOps(t, "Put on a full queue", counter.Snapshot().Sub(before), map[zkcount.Op]int64{zkcount.OpExists: 1})
	if _, err := p.PutAll(ctx, [][]byte{[]byte("4")}); !errors.Is(err, queue.ErrFull) {
		t.Fatalf("PutAll on a full queue: %v, want ErrFull", err)
	}
	if n := len(children(t, s, path)); n != 3 {
		t.Fatalf("%d items after the refused puts, want 3", n)
	}
	it, err := c.Take(ctx)
	if err != nil || string(it.Data) != "1" {
		t.Fatalf("Take: %v, %v", it, err)
	}
	if _, err := p.PutAll(ctx, [][]byte{[]byte("4"), []byte("5")}); !errors.Is(err, queue.ErrFull) {
		t.Fatalf("PutAll of 2 with room for 1: %v, want ErrFull", err)
	}
	if _, err := p.Put(ctx, []byte("4")); err != nil {
		t.Fatalf("Put after a take made room: %v", err)
	}
	if n := len(children(t, s, path)); n != 3 {
		t.Fatalf("%d items, want 3", n)
	}
}
